package join

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/pki"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	joinproto "github.com/flotilla-io/flotilla/pkg/join"
)

// Handler serves join and leave requests.
type Handler struct {
	Client    client.Client
	Namespace string
	CA        *pki.CA
	Log       logr.Logger
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// maxMemberName keeps flotilla-member-<name> a valid namespace name.
var maxMemberName = validation.DNS1123LabelMaxLength - len(clusterv1beta1.MemberNamespacePrefix)

// ServeConn answers one request on a TLS connection that negotiated the join
// protocol, then closes it.
func (h *Handler) ServeConn(ctx context.Context, conn *tls.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	req := joinproto.Request{}
	if err := joinproto.Read(conn, &req); err != nil {
		h.Log.V(1).Info("bad join request", "remote", conn.RemoteAddr().String(), "error", err.Error())
		_ = joinproto.Write(conn, joinproto.Response{Error: "the hub could not read the request: " + err.Error()})
		return
	}
	var resp joinproto.Response
	var err error
	switch req.Action {
	case joinproto.ActionJoin:
		resp, err = h.join(ctx, req)
	case joinproto.ActionLeave:
		err = h.leave(ctx, req, conn.ConnectionState())
	default:
		err = errTokenRefused{fmt.Sprintf("unknown action %q", req.Action)}
	}
	if err != nil {
		var refused errTokenRefused
		if errors.As(err, &refused) {
			resp = joinproto.Response{Error: refused.msg}
		} else {
			h.Log.Error(err, "join request failed", "member", req.ClusterName, "action", req.Action)
			resp = joinproto.Response{Error: "the hub failed to handle the request (see the hub's log): " + err.Error()}
		}
	}
	if werr := joinproto.Write(conn, resp); werr != nil {
		h.Log.V(1).Info("cannot answer join request", "error", werr.Error())
	}
}

func validateMember(name string, labels map[string]string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return errTokenRefused{fmt.Sprintf("--name %q is not a valid member name: %s", name, strings.Join(errs, "; "))}
	}
	if len(name) > maxMemberName {
		return errTokenRefused{fmt.Sprintf("--name %q is too long: at most %d characters", name, maxMemberName)}
	}
	for k, v := range labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return errTokenRefused{fmt.Sprintf("label key %q is invalid: %s", k, strings.Join(errs, "; "))}
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return errTokenRefused{fmt.Sprintf("label %s=%q has an invalid value: %s", k, v, strings.Join(errs, "; "))}
		}
	}
	return nil
}

// join checks the token, signs the certificate and records the member.
func (h *Handler) join(ctx context.Context, req joinproto.Request) (joinproto.Response, error) {
	if err := validateMember(req.ClusterName, req.Labels); err != nil {
		return joinproto.Response{}, err
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	if err := checkToken(ctx, h.Client, h.Namespace, req.Token, req.ClusterName, now()); err != nil {
		return joinproto.Response{}, err
	}
	certPEM, err := h.CA.SignMember(req.CSR, req.ClusterName)
	if err != nil {
		return joinproto.Response{}, errTokenRefused{err.Error()}
	}
	if err := h.ensureMember(ctx, req); err != nil {
		return joinproto.Response{}, err
	}
	h.Log.Info("member joined", "member", req.ClusterName, "agentVersion", req.AgentVersion)
	return joinproto.Response{Certificate: certPEM, CA: h.CA.CertPEM}, nil
}

// ensureMember creates (or, on a re-join, relabels) the MemberCluster and its
// Work namespace, and records Joined=True.
func (h *Handler) ensureMember(ctx context.Context, req joinproto.Request) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   clusterv1beta1.MemberNamespace(req.ClusterName),
		Labels: map[string]string{"app.kubernetes.io/part-of": "flotilla", clusterv1beta1.LabelClusterName: req.ClusterName},
	}}
	if err := h.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create namespace %s: %w", ns.Name, err)
	}
	mc := &clusterv1beta1.MemberCluster{}
	err := h.Client.Get(ctx, types.NamespacedName{Name: req.ClusterName}, mc)
	switch {
	case apierrors.IsNotFound(err):
		mc = &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: req.ClusterName, Labels: req.Labels}}
		if err := h.Client.Create(ctx, mc); err != nil {
			return fmt.Errorf("failed to create MemberCluster %s: %w", req.ClusterName, err)
		}
	case err != nil:
		return fmt.Errorf("failed to read MemberCluster %s: %w", req.ClusterName, err)
	case !mc.DeletionTimestamp.IsZero():
		return errTokenRefused{fmt.Sprintf("member %q is still leaving the fleet: wait until `kubectl get mc %s` finds nothing, then join again", req.ClusterName, req.ClusterName)}
	default:
		patch := client.MergeFrom(mc.DeepCopy())
		if mc.Labels == nil {
			mc.Labels = map[string]string{}
		}
		for k, v := range req.Labels {
			mc.Labels[k] = v
		}
		if err := h.Client.Patch(ctx, mc, patch); err != nil {
			return fmt.Errorf("failed to update MemberCluster %s: %w", req.ClusterName, err)
		}
	}
	// The membership controller writes this status too: retry on conflict.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := h.Client.Get(ctx, types.NamespacedName{Name: req.ClusterName}, mc); err != nil {
			return err
		}
		if conditions.IsCurrentTrue(mc.Status.Conditions, clusterv1beta1.ConditionJoined, mc.Generation) {
			return nil
		}
		conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionJoined, metav1.ConditionTrue, clusterv1beta1.ReasonJoined,
			fmt.Sprintf("joined with a bootstrap token at %s", time.Now().UTC().Format(time.RFC3339)), mc.Generation)
		return h.Client.Status().Update(ctx, mc)
	})
	if err != nil {
		return fmt.Errorf("failed to record MemberCluster %s as joined: %w", req.ClusterName, err)
	}
	return nil
}

// leave forgets a member; only that member's own certificate may ask.
func (h *Handler) leave(ctx context.Context, req joinproto.Request, state tls.ConnectionState) error {
	if len(state.VerifiedChains) == 0 || state.VerifiedChains[0][0].Subject.CommonName != req.ClusterName {
		return errTokenRefused{fmt.Sprintf("only member %q itself, with the certificate it joined with, can leave", req.ClusterName)}
	}
	// The agent removed everything it applied before asking: say so, so that the
	// hub does not wait for confirmations that will never come, then delete the
	// MemberCluster (membership removes its bindings, Work and namespace first).
	mc := &clusterv1beta1.MemberCluster{}
	if err := h.Client.Get(ctx, types.NamespacedName{Name: req.ClusterName}, mc); err != nil {
		return client.IgnoreNotFound(err)
	}
	patch := client.MergeFrom(mc.DeepCopy())
	metav1.SetMetaDataAnnotation(&mc.ObjectMeta, clusterv1beta1.AnnotationLeftCleanly, "true")
	if err := h.Client.Patch(ctx, mc, patch); err != nil {
		return fmt.Errorf("failed to mark MemberCluster %s as left: %w", req.ClusterName, err)
	}
	if err := client.IgnoreNotFound(h.Client.Delete(ctx, mc)); err != nil {
		return fmt.Errorf("failed to delete MemberCluster %s: %w", req.ClusterName, err)
	}
	h.Log.Info("member left", "member", req.ClusterName)
	return nil
}
