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

package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-io/flotilla/agent/join"
)

// FieldManager owns the fields install applies (server-side apply).
const FieldManager = "flotilla-agent-install"

// DefaultTimeout bounds the wait for the agent pod to run.
const DefaultTimeout = 3 * time.Minute

// pollInterval is how often the agent pod's state is read while waiting.
const pollInterval = time.Second

// Options configure Install.
type Options struct {
	// Member connects to the member cluster. Required.
	Member *rest.Config
	// Image is the agent image. Default: the one manifests/agent names
	// (DefaultImage).
	Image string
	// Profile is the RBAC profile of manifests/agent to apply: ProfileFull or
	// ProfileLeastPrivilege. Default: ProfileFull.
	Profile string
	// Timeout bounds the wait for the agent pod to run. Default: DefaultTimeout.
	Timeout time.Duration
}

// Result describes an installed agent.
type Result struct {
	// Image the agent runs.
	Image string
	// Pod is the running agent pod's name.
	Pod string
}

// Install applies manifests/agent to the member cluster with the agent image
// and waits until the agent pod runs (it then connects with the identity
// `agent join` stored). When the agent cannot be installed or does not run, it
// says what is missing and removes what it created (objects that existed
// before are put back as they were), so no half-installed agent stays.
func Install(ctx context.Context, opts Options) (*Result, error) {
	if opts.Member == nil {
		return nil, errors.New("install needs the member cluster's config")
	}
	if opts.Image == "" {
		image, err := DefaultImage()
		if err != nil {
			return nil, err
		}
		opts.Image = image
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	objs, err := Render(opts.Profile, opts.Image)
	if err != nil {
		return nil, err
	}
	in, err := newInstaller(opts.Member, opts.Image, objs)
	if err != nil {
		return nil, fmt.Errorf("failed to connect to the member cluster at %s: %w", opts.Member.Host, err)
	}
	if err := in.checkIdentity(ctx); err != nil {
		return nil, err
	}
	if err := in.checkAccess(ctx); err != nil {
		return nil, err
	}
	var pod string
	err = in.apply(ctx)
	if err == nil {
		pod, err = in.waitRunning(ctx, opts.Timeout)
	}
	if err != nil {
		if rerr := in.rollback(context.WithoutCancel(ctx)); rerr != nil {
			return nil, fmt.Errorf("%w; rolling back also failed: %w", err, rerr)
		}
		return nil, fmt.Errorf("%w (nothing of the agent was left installed)", err)
	}
	return &Result{Image: opts.Image, Pod: pod}, nil
}

// installer carries what an Install learns on the way.
//
// It talks to the member with the dynamic client and the typed clients of the
// two groups it reads, not with controller-runtime's client, whose metrics
// package would link leader election and, through it, the clients and
// informers of every API group into the agent binary (see
// docs/performance/2026-11-23-agent-footprint.md).
type installer struct {
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
	core    corev1client.CoreV1Interface
	authz   authorizationv1client.AuthorizationV1Interface
	host    string
	image   string
	// objs are the rendered manifests, in apply order.
	objs []*unstructured.Unstructured
	// created are the objects apply created (deleted on rollback).
	created []*unstructured.Unstructured
	// replaced are the objects that existed before apply changed them
	// (restored on rollback).
	replaced []*unstructured.Unstructured
}

func newInstaller(cfg *rest.Config, image string, objs []*unstructured.Unstructured) (*installer, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &installer{
		dynamic: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
		core: core, authz: authz, host: cfg.Host, image: image, objs: objs,
	}, nil
}

// resource is the dynamic client of obj's resource (in its namespace, when
// namespaced), and the resource's mapping.
func (in *installer) resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := in.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, nil, fmt.Errorf("the member cluster at %s does not serve %s: %w", in.host, gvk, err)
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return in.dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace()), mapping, nil
	}
	return in.dynamic.Resource(mapping.Resource), mapping, nil
}

func describe(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + " " + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetName()
}

// checkIdentity fails unless `agent join` stored the identity the agent pod uses.
func (in *installer) checkIdentity(ctx context.Context) error {
	_, err := in.core.Secrets(join.Namespace).Get(ctx, join.SecretName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("the member cluster at %s has no agent identity (Secret %s/%s): run `agent join` first; the agent pod uses that identity",
			in.host, join.Namespace, join.SecretName)
	case err != nil:
		return fmt.Errorf("failed to read the agent identity Secret %s/%s on %s: %w", join.Namespace, join.SecretName, in.host, err)
	}
	return nil
}

// checkAccess asks the member's API server whether these credentials may create
// (or, when it exists, update) every object, and lists all that they may not,
// before anything is changed.
func (in *installer) checkAccess(ctx context.Context) error {
	var missing []string
	for _, obj := range in.objs {
		gvk := obj.GroupVersionKind()
		_, mapping, err := in.resource(obj)
		if err != nil {
			return err
		}
		for _, verb := range []string{"create", "patch"} {
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: obj.GetNamespace(), Verb: verb, Group: gvk.Group,
					Resource: mapping.Resource.Resource, Name: nameForVerb(verb, obj),
				},
			}}
			review, err := in.authz.SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("failed to check access on the member cluster at %s: %w", in.host, err)
			}
			if !review.Status.Allowed {
				what := mapping.Resource.Resource
				if gvk.Group != "" {
					what += "." + gvk.Group
				}
				if ns := obj.GetNamespace(); ns != "" {
					what += " in namespace " + ns
				}
				missing = append(missing, fmt.Sprintf("%s %s (for %s)", verb, what, describe(obj)))
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("these credentials may not install the agent on the member cluster at %s; missing permissions: %s. Use a kubeconfig that may (cluster-admin, for instance); nothing was changed",
			in.host, strings.Join(missing, "; "))
	}
	return nil
}

// nameForVerb is the object name an access review asks about: none for create
// (a name is not known to the authorizer before the object exists).
func nameForVerb(verb string, obj *unstructured.Unstructured) string {
	if verb == "create" {
		return ""
	}
	return obj.GetName()
}

// apply server-side-applies every object, remembering what it created or changed.
func (in *installer) apply(ctx context.Context) error {
	logger := log.FromContext(ctx)
	for _, obj := range in.objs {
		res, _, err := in.resource(obj)
		if err != nil {
			return err
		}
		before, err := res.Get(ctx, obj.GetName(), metav1.GetOptions{})
		existed := err == nil
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to read %s on the member cluster: %w", describe(obj), err)
		}
		data, err := json.Marshal(obj.Object)
		if err != nil {
			return err
		}
		force := true
		applied, err := res.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
		if err != nil {
			return fmt.Errorf("failed to apply %s on the member cluster: %w", describe(obj), err)
		}
		if existed {
			in.replaced = append(in.replaced, before)
		} else {
			in.created = append(in.created, applied)
		}
		logger.V(1).Info("Applied", "object", describe(obj), "created", !existed)
	}
	return nil
}

// rollback deletes what apply created, newest first, and puts back what it changed.
func (in *installer) rollback(ctx context.Context) error {
	var errs []error
	for i := len(in.created) - 1; i >= 0; i-- {
		obj := in.created[i]
		res, _, err := in.resource(obj)
		if err == nil {
			background := metav1.DeletePropagationBackground
			err = res.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &background})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("failed to delete %s: %w", describe(obj), err))
		}
	}
	for _, before := range in.replaced {
		res, _, err := in.resource(before)
		var current *unstructured.Unstructured
		if err == nil {
			current, err = res.Get(ctx, before.GetName(), metav1.GetOptions{})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to read %s to restore it: %w", describe(before), err))
			continue
		}
		restored := before.DeepCopy()
		restored.SetResourceVersion(current.GetResourceVersion())
		restored.SetManagedFields(nil)
		if _, err := res.Update(ctx, restored, metav1.UpdateOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("failed to restore %s: %w", describe(before), err))
		}
	}
	return errors.Join(errs...)
}

// deployment is the rendered agent Deployment.
func (in *installer) deployment() *unstructured.Unstructured {
	for _, obj := range in.objs {
		if obj.GetKind() == "Deployment" {
			return obj
		}
	}
	return nil
}

// waitRunning waits until a pod of the agent Deployment runs, failing early when
// its image cannot be had or its container keeps crashing.
func (in *installer) waitRunning(ctx context.Context, timeout time.Duration) (string, error) {
	deploy := in.deployment()
	if deploy == nil {
		return "", errors.New("manifests/agent has no Deployment")
	}
	selector, _, err := unstructured.NestedStringMap(deploy.Object, "spec", "selector", "matchLabels")
	if err != nil || len(selector) == 0 {
		return "", fmt.Errorf("manifests/agent: Deployment %s has no matchLabels selector", deploy.GetName())
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := "no agent pod was created"
	for {
		pods, err := in.core.Pods(deploy.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(selector).String()})
		if err != nil {
			if ctx.Err() == nil {
				return "", fmt.Errorf("failed to list the agent pods: %w", err)
			}
			pods = &corev1.PodList{}
		}
		for i := range pods.Items {
			if !isAgentPodOf(&pods.Items[i], in.image) {
				continue // a pod of an earlier install, on its way out
			}
			state := podState(&pods.Items[i], in.image)
			if state.running {
				return pods.Items[i].Name, nil
			}
			if state.fatal != "" {
				return "", errors.New(state.fatal)
			}
			last = state.summary
		}
		if reason := in.deploymentFailure(ctx, deploy); reason != "" {
			return "", errors.New(reason)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the agent pod did not run within %s: %s", timeout, last)
		case <-time.After(pollInterval):
		}
	}
}

// deploymentFailure returns the Deployment's ReplicaFailure message (pods the
// member refuses to create: quota, pod security, ...), or "".
func (in *installer) deploymentFailure(ctx context.Context, deploy *unstructured.Unstructured) string {
	res, _, err := in.resource(deploy)
	if err != nil {
		return ""
	}
	current, err := res.Get(ctx, deploy.GetName(), metav1.GetOptions{})
	if err != nil {
		return ""
	}
	conds, _, _ := unstructured.NestedSlice(current.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "ReplicaFailure" && m["status"] == "True" {
			return fmt.Sprintf("the member cluster does not create the agent pod: %v", m["message"])
		}
	}
	return ""
}

// isAgentPodOf reports whether pod is a live agent pod running image.
func isAgentPodOf(pod *corev1.Pod, image string) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	for _, c := range pod.Spec.Containers {
		if c.Image == image {
			return true
		}
	}
	return false
}

// imageFailures are the waiting reasons that mean the node cannot get the image.
var imageFailures = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "ErrImageNeverPull": true, "InvalidImageName": true,
}

type agentPodState struct {
	running bool
	// fatal is set when waiting longer cannot help.
	fatal string
	// summary says where the pod is, for a timeout message.
	summary string
}

// podState reads an agent pod's status.
func podState(pod *corev1.Pod, image string) agentPodState {
	var waiting []string
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			if imageFailures[w.Reason] {
				return agentPodState{fatal: fmt.Sprintf("the member's nodes cannot get the agent image %s (%s: %s): load it into the member's nodes (kind load image-archive, ctr images import) or push it where they pull from, and pass it with --image",
					image, w.Reason, w.Message)}
			}
			if w.Reason == "CrashLoopBackOff" || w.Reason == "CreateContainerConfigError" || w.Reason == "CreateContainerError" {
				return agentPodState{fatal: fmt.Sprintf("the agent container of pod %s does not start (%s: %s); see `kubectl logs -n %s %s`",
					pod.Name, w.Reason, w.Message, pod.Namespace, pod.Name)}
			}
			waiting = append(waiting, cs.Name+" "+w.Reason)
		}
	}
	if pod.Status.Phase == corev1.PodRunning && len(pod.Status.ContainerStatuses) > 0 && len(waiting) == 0 {
		return agentPodState{running: true}
	}
	summary := fmt.Sprintf("pod %s is %s", pod.Name, pod.Status.Phase)
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			summary += " (not scheduled: " + c.Message + ")"
		}
	}
	if len(waiting) > 0 {
		sort.Strings(waiting)
		summary += ", waiting: " + strings.Join(waiting, ", ")
	}
	return agentPodState{summary: summary}
}
