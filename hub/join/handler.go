/*
Copyright 2026 The Flotilla Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package join

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/membership"
	"github.com/flotilla-io/flotilla/hub/pki"
	"github.com/flotilla-io/flotilla/hub/readiness"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	joinproto "github.com/flotilla-io/flotilla/pkg/join"
)

// Defaults of Handler.
const (
	// DefaultAttemptsPerMinute is how many requests one source address may
	// make per minute (and at once).
	DefaultAttemptsPerMinute = 10
)

// Handler serves join, renew and leave requests.
type Handler struct {
	Client    client.Client
	Namespace string
	CA        *pki.CA
	Log       logr.Logger
	// MemberLifetime is how long the member certificates it signs are valid.
	// Default: pki.DefaultMemberLifetime.
	MemberLifetime time.Duration
	// AttemptsPerMinute rate-limits requests per source address (the burst
	// is the same number). Default: DefaultAttemptsPerMinute.
	AttemptsPerMinute int
	// Now is the clock. Default: time.Now.
	Now func() time.Time

	limitersMu sync.Mutex
	limiters   map[string]*rate.Limiter
}

// maxMemberName keeps flotilla-member-<name> a valid namespace name.
var maxMemberName = validation.DNS1123LabelMaxLength - len(clusterv1beta1.MemberNamespacePrefix)

// joinDeadline bounds a join, renew or leave exchange.
const joinDeadline = 15 * time.Second

// maxLimiters bounds the per-source limiters kept; full ones are dropped.
const maxLimiters = 4096

// allow reports whether the source address may make another request now.
func (h *Handler) allow(addr net.Addr) bool {
	host := addr.String()
	if tcp, ok := addr.(*net.TCPAddr); ok {
		host = tcp.IP.String()
	}
	perMinute := h.AttemptsPerMinute
	if perMinute <= 0 {
		perMinute = DefaultAttemptsPerMinute
	}
	h.limitersMu.Lock()
	defer h.limitersMu.Unlock()
	if h.limiters == nil {
		h.limiters = map[string]*rate.Limiter{}
	}
	l := h.limiters[host]
	if l == nil {
		if len(h.limiters) >= maxLimiters {
			for k, v := range h.limiters {
				if v.Tokens() >= float64(v.Burst()) {
					delete(h.limiters, k)
				}
			}
		}
		l = rate.NewLimiter(rate.Every(time.Minute/time.Duration(perMinute)), perMinute)
		h.limiters[host] = l
	}
	return l.Allow()
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// ServeConn answers one request on a TLS connection that negotiated the join
// protocol, then closes it.
func (h *Handler) ServeConn(ctx context.Context, conn *tls.Conn) {
	defer conn.Close()
	// The exchange is one request and one answer; a client that is slow about
	// it holds one of the tunnel port's unauthorized slots (MaxHandshakes).
	_ = conn.SetDeadline(time.Now().Add(joinDeadline))
	if !h.allow(conn.RemoteAddr()) {
		joinAttempts.WithLabelValues("rate-limited").Inc()
		_ = joinproto.Write(conn, joinproto.Response{Error: fmt.Sprintf("too many join requests from %s: wait a minute, then try again", remoteHost(conn.RemoteAddr()))})
		return
	}
	req := joinproto.Request{}
	if err := joinproto.Read(conn, &req); err != nil {
		h.Log.V(1).Info("bad join request", "remote", conn.RemoteAddr().String(), "error", err.Error())
		_ = joinproto.Write(conn, joinproto.Response{Error: "the hub could not read the request (" + err.Error() + "): check that agent and hub versions match"})
		return
	}
	var resp joinproto.Response
	var err error
	switch req.Action {
	case joinproto.ActionJoin:
		resp, err = h.join(ctx, req)
	case joinproto.ActionRenew:
		resp, err = h.renew(ctx, req, conn.ConnectionState())
	case joinproto.ActionLeave:
		err = h.leave(ctx, req, conn.ConnectionState())
	default:
		err = refusef("unknown action %q: check that agent and hub versions match", req.Action)
	}
	outcome := "accepted"
	if err != nil {
		outcome = "refused"
		var refused errRefused
		if errors.As(err, &refused) {
			resp = joinproto.Response{Error: refused.msg}
			h.Log.Info("join request refused", "member", req.ClusterName, "action", req.Action, "remote", conn.RemoteAddr().String(), "reason", refused.msg)
		} else {
			outcome = "error"
			h.Log.Error(err, "join request failed", "member", req.ClusterName, "action", req.Action)
			resp = joinproto.Response{Error: "the hub failed to handle the request (" + err.Error() + "): try again; if it persists, see the hub's log"}
		}
	}
	joinAttempts.WithLabelValues(outcome).Inc()
	if werr := joinproto.Write(conn, resp); werr != nil {
		h.Log.V(1).Info("cannot answer join request", "error", werr.Error())
	}
}

func remoteHost(addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	return addr.String()
}

func validateMember(name string, labels map[string]string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return refusef("--name %q is not a valid member name: %s", name, strings.Join(errs, "; "))
	}
	if len(name) > maxMemberName {
		return refusef("--name %q is too long: at most %d characters", name, maxMemberName)
	}
	for k, v := range labels {
		if k == clusterv1beta1.LabelHub {
			return refusef("label %s is the hub's: join the hub itself with `agent join --hub-as-member` instead of setting it", k)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return refusef("label key %q is invalid: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return refusef("label %s=%q has an invalid value: %s", k, v, strings.Join(errs, "; "))
		}
	}
	return nil
}

// join checks the token, signs the certificate and records the member.
func (h *Handler) join(ctx context.Context, req joinproto.Request) (joinproto.Response, error) {
	if err := validateMember(req.ClusterName, req.Labels); err != nil {
		return joinproto.Response{}, err
	}
	mc := &clusterv1beta1.MemberCluster{}
	err := h.Client.Get(ctx, types.NamespacedName{Name: req.ClusterName}, mc)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return joinproto.Response{}, fmt.Errorf("failed to read MemberCluster %s: %w", req.ClusterName, err)
	}
	if exists && !mc.DeletionTimestamp.IsZero() {
		return joinproto.Response{}, refusef("member %q is still leaving the fleet: wait until `kubectl get mc %s` finds nothing, then join again", req.ClusterName, req.ClusterName)
	}
	g, err := checkToken(ctx, h.Client, h.Namespace, req.Token, req.ClusterName, exists, h.now())
	if err != nil {
		return joinproto.Response{}, err
	}
	certPEM, cert, err := h.CA.SignMemberFor(req.CSR, req.ClusterName, h.MemberLifetime)
	if err != nil {
		return joinproto.Response{}, refusef("%s: this agent's certificate request is unusable; check that agent and hub versions match", err.Error())
	}
	if err := h.ensureMember(ctx, req, g.mayExist); err != nil {
		return joinproto.Response{}, err
	}
	if err := h.recordIdentity(ctx, req.ClusterName, cert, "", true); err != nil {
		return joinproto.Response{}, err
	}
	h.Log.Info("member joined", "member", req.ClusterName, "agentVersion", req.AgentVersion, "serial", pki.Serial(cert), "rejoin", exists)
	return joinproto.Response{Certificate: certPEM, CA: h.CA.CertPEM}, nil
}

// ensureMember creates the MemberCluster and its Work namespace, or, when
// mayExist (a re-join), relabels an existing one. A member that appeared since
// the token was checked (a racing join) is refused.
func (h *Handler) ensureMember(ctx context.Context, req joinproto.Request, mayExist bool) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   clusterv1beta1.MemberNamespace(req.ClusterName),
		Labels: map[string]string{"app.kubernetes.io/part-of": "flotilla", clusterv1beta1.LabelClusterName: req.ClusterName},
	}}
	if err := h.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create namespace %s: %w", ns.Name, err)
	}
	// A new member is created with what membership would add in a write of
	// its own: its finalizer and built-in labels.
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{
		Name: req.ClusterName, Labels: req.Labels, Finalizers: []string{clusterv1beta1.MemberClusterFinalizer},
	}}
	if req.HubAsMember {
		markHub(mc)
	}
	membership.SetBuiltinLabels(mc)
	err := h.Client.Create(ctx, mc)
	switch {
	case err == nil:
		return nil
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("failed to create MemberCluster %s: %w", req.ClusterName, err)
	case !mayExist:
		return refusef("member %q joined the fleet at the same moment with another token: to re-join it, create a token with `hub token create --name %s --rejoin`", req.ClusterName, req.ClusterName)
	}
	if err := h.Client.Get(ctx, types.NamespacedName{Name: req.ClusterName}, mc); err != nil {
		return fmt.Errorf("failed to read MemberCluster %s: %w", req.ClusterName, err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return refusef("member %q is still leaving the fleet: wait until `kubectl get mc %s` finds nothing, then join again", req.ClusterName, req.ClusterName)
	}
	patch := client.MergeFrom(mc.DeepCopy())
	if mc.Labels == nil {
		mc.Labels = map[string]string{}
	}
	for k, v := range req.Labels {
		mc.Labels[k] = v
	}
	if req.HubAsMember {
		markHub(mc)
	}
	if err := h.Client.Patch(ctx, mc, patch); err != nil {
		return fmt.Errorf("failed to update MemberCluster %s: %w", req.ClusterName, err)
	}
	return nil
}

// recordIdentity makes cert the member certificate the tunnel accepts. A join
// (joined) also records Joined=True and forgets every earlier certificate; a
// renewal by the certificate with serial renewedFrom keeps that one accepted
// until the agent connects with the new one. When renewedFrom is set, the
// write happens only if it is still accepted (optimistic locking makes this
// atomic with the check).
func (h *Handler) recordIdentity(ctx context.Context, member string, cert *x509.Certificate, renewedFrom string, joined bool) error {
	notAfter, issued := metav1.NewTime(cert.NotAfter), metav1.NewTime(h.now())
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := h.Client.Get(ctx, types.NamespacedName{Name: member}, mc); err != nil {
			return err
		}
		id := &clusterv1beta1.MemberIdentity{CertificateSerial: pki.Serial(cert), NotAfter: &notAfter, IssuedAt: &issued}
		if !joined {
			if !mc.Status.Identity.Accepts(renewedFrom) {
				return refusef("the certificate this agent renews with is no longer accepted for member %q (the member re-joined or was renewed since): re-join with a token from `hub token create --name %s --rejoin`", member, member)
			}
			// Keep the certificate the agent still uses until it connects
			// with the new one.
			id.PreviousCertificateSerial = renewedFrom
		}
		mc.Status.Identity = id
		if joined {
			conditions.Set(&mc.Status.Conditions, clusterv1beta1.ConditionJoined, metav1.ConditionTrue, clusterv1beta1.ReasonJoined,
				fmt.Sprintf("joined with a bootstrap token at %s", h.now().UTC().Format(time.RFC3339)), mc.Generation)
			// A new member's first conditions in the same write: membership
			// then has no status to write for it.
			membership.SetFirstConditions(mc)
		}
		readiness.SetMemberCluster(mc)
		return h.Client.Status().Update(ctx, mc)
	})
	var refused errRefused
	if errors.As(err, &refused) {
		return err
	}
	if err != nil {
		return fmt.Errorf("failed to record the certificate of MemberCluster %s: %w", member, err)
	}
	return nil
}

// peerMember returns the verified member certificate of a join connection
// and checks that it is the one the hub accepts for member.
func (h *Handler) peerMember(ctx context.Context, member string, state tls.ConnectionState, what string) (*x509.Certificate, error) {
	if len(state.VerifiedChains) == 0 || len(state.VerifiedChains[0]) == 0 {
		return nil, refusef("only member %q itself, with its certificate, can %s: run this on the member, with the identity `agent join` stored", member, what)
	}
	leaf := state.VerifiedChains[0][0]
	if leaf.Subject.CommonName != member {
		return nil, refusef("this certificate is for member %q, not %q: only a member itself can %s", leaf.Subject.CommonName, member, what)
	}
	mc := &clusterv1beta1.MemberCluster{}
	if err := h.Client.Get(ctx, types.NamespacedName{Name: member}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, refusef("member %q is not in the fleet (it left or was deleted): join again with a token from `hub token create --name %s`", member, member)
		}
		return nil, fmt.Errorf("failed to read MemberCluster %s: %w", member, err)
	}
	if !mc.Status.Identity.Accepts(pki.Serial(leaf)) {
		return nil, refusef("this certificate (serial %s) is no longer accepted for member %q (the member re-joined or renewed since): re-join with a token from `hub token create --name %s --rejoin`", pki.Serial(leaf), member, member)
	}
	return leaf, nil
}

// renew signs a new certificate for a member that asks with the certificate
// the hub accepts for it, over mutual TLS.
func (h *Handler) renew(ctx context.Context, req joinproto.Request, state tls.ConnectionState) (joinproto.Response, error) {
	leaf, err := h.peerMember(ctx, req.ClusterName, state, "renew its certificate")
	if err != nil {
		return joinproto.Response{}, err
	}
	certPEM, cert, err := h.CA.SignMemberFor(req.CSR, req.ClusterName, h.MemberLifetime)
	if err != nil {
		return joinproto.Response{}, refusef("%s: this agent's certificate request is unusable; check that agent and hub versions match", err.Error())
	}
	if err := h.recordIdentity(ctx, req.ClusterName, cert, pki.Serial(leaf), false); err != nil {
		return joinproto.Response{}, err
	}
	certificatesRenewed.Inc()
	h.Log.Info("member certificate renewed", "member", req.ClusterName, "serial", pki.Serial(cert), "previous", pki.Serial(leaf), "notAfter", cert.NotAfter)
	return joinproto.Response{Certificate: certPEM, CA: h.CA.CertPEM}, nil
}

// leave forgets a member; only that member's own, still accepted certificate
// may ask.
func (h *Handler) leave(ctx context.Context, req joinproto.Request, state tls.ConnectionState) error {
	if _, err := h.peerMember(ctx, req.ClusterName, state, "leave"); err != nil {
		var refused errRefused
		if errors.As(err, &refused) && strings.Contains(refused.msg, "is not in the fleet") {
			return nil // already gone: leaving is done
		}
		return err
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

// markHub labels a MemberCluster as the hub joined as a member and taints it so
// that only placements which tolerate the taint land there (see
// clusterv1beta1.LabelHub and TaintHub). An existing hub taint is left as it is.
func markHub(mc *clusterv1beta1.MemberCluster) {
	if mc.Labels == nil {
		mc.Labels = map[string]string{}
	}
	mc.Labels[clusterv1beta1.LabelHub] = "true"
	for _, t := range mc.Spec.Taints {
		if t.Key == clusterv1beta1.TaintHub {
			return
		}
	}
	mc.Spec.Taints = append(mc.Spec.Taints, clusterv1beta1.Taint{Key: clusterv1beta1.TaintHub, Value: "true", Effect: clusterv1beta1.TaintEffectNoSchedule})
}
