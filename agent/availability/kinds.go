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

package availability

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deploymentAvailability: the controller has seen the latest spec, and every desired
// replica is updated and available, none unavailable.
func deploymentAvailability(obj *unstructured.Unstructured) Result {
	if r, stale := notObserved(obj); stale {
		return r
	}
	f := fields{obj: obj}
	desired := f.int("spec.replicas", 1)
	updated := f.int("status.updatedReplicas", 0)
	avail := f.int("status.availableReplicas", 0)
	unavailable := f.int("status.unavailableReplicas", 0)
	if f.err != nil {
		return notAvailable("%v", f.err)
	}
	msg := fmt.Sprintf("%d/%d replicas available, %d/%d updated", avail, desired, updated, desired)
	if unavailable > 0 {
		msg += fmt.Sprintf(", %d unavailable", unavailable)
	}
	if updated == desired && avail == desired && unavailable == 0 {
		return available("%s", msg)
	}
	return notAvailable("%s", msg)
}

// statefulSetAvailability: the controller has seen the latest spec, every desired
// replica is available and the rollout has finished (the current revision is the
// update revision).
func statefulSetAvailability(obj *unstructured.Unstructured) Result {
	if r, stale := notObserved(obj); stale {
		return r
	}
	f := fields{obj: obj}
	desired := f.int("spec.replicas", 1)
	avail := f.int("status.availableReplicas", 0)
	current := f.string("status.currentRevision")
	update := f.string("status.updateRevision")
	if f.err != nil {
		return notAvailable("%v", f.err)
	}
	msg := fmt.Sprintf("%d/%d replicas available", avail, desired)
	if avail != desired {
		return notAvailable("%s", msg)
	}
	if current != update {
		return notAvailable("%s, rolling out revision %q (current revision %q)", msg, update, current)
	}
	return available("%s, revision %q", msg, current)
}

// daemonSetAvailability: the controller has seen the latest spec, and the daemon pod
// is available and updated on every node that should run it.
func daemonSetAvailability(obj *unstructured.Unstructured) Result {
	if r, stale := notObserved(obj); stale {
		return r
	}
	f := fields{obj: obj}
	desired := f.int("status.desiredNumberScheduled", 0)
	avail := f.int("status.numberAvailable", 0)
	updated := f.int("status.updatedNumberScheduled", 0)
	if f.err != nil {
		return notAvailable("%v", f.err)
	}
	msg := fmt.Sprintf("%d/%d pods available, %d/%d updated", avail, desired, updated, desired)
	if avail == desired && updated == desired {
		return available("%s", msg)
	}
	return notAvailable("%s", msg)
}

// jobAvailability: the Job has completed (condition Complete, or as many successful
// pods as completions asks for, one when unset).
func jobAvailability(obj *unstructured.Unstructured) Result {
	if c, ok := condition(obj, "Complete"); ok && c.status == "True" {
		return available("the job has completed")
	}
	if c, ok := condition(obj, "Failed"); ok && c.status == "True" {
		return notAvailable("the job has failed: %s", c.describe())
	}
	f := fields{obj: obj}
	completions := f.int("spec.completions", 1)
	succeeded := f.int("status.succeeded", 0)
	if f.err != nil {
		return notAvailable("%v", f.err)
	}
	if succeeded >= completions && succeeded > 0 {
		return available("%d/%d completions succeeded", succeeded, completions)
	}
	return notAvailable("%d/%d completions succeeded", succeeded, completions)
}

// serviceAvailability: ExternalName and headless Services are available at once; a
// LoadBalancer Service needs an ingress point; other Services need a cluster IP.
func serviceAvailability(obj *unstructured.Unstructured) Result {
	f := fields{obj: obj}
	typ := f.string("spec.type")
	clusterIP := f.string("spec.clusterIP")
	if f.err != nil {
		return notAvailable("%v", f.err)
	}
	switch {
	case typ == "ExternalName":
		return available("ExternalName service")
	case typ == "LoadBalancer":
		ingress, _, err := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
		if err != nil {
			return notAvailable("cannot read status.loadBalancer.ingress: %v", err)
		}
		if len(ingress) == 0 {
			return notAvailable("waiting for the load balancer to get an ingress point")
		}
		return available("load balancer ingress: %s", describeIngress(ingress))
	case clusterIP == "None":
		return available("headless service")
	case clusterIP != "":
		return available("cluster IP %s assigned", clusterIP)
	default:
		return notAvailable("no cluster IP assigned yet")
	}
}

func describeIngress(ingress []any) string {
	var points []string
	for _, i := range ingress {
		m, _ := i.(map[string]any)
		if ip, _ := m["ip"].(string); ip != "" {
			points = append(points, ip)
		} else if host, _ := m["hostname"].(string); host != "" {
			points = append(points, host)
		}
	}
	if len(points) == 0 {
		return fmt.Sprintf("%d point(s)", len(ingress))
	}
	return strings.Join(points, ", ")
}

// crdAvailability: the CustomResourceDefinition is Established, so its resources are
// served.
func crdAvailability(obj *unstructured.Unstructured) Result {
	if c, ok := condition(obj, "Established"); ok && c.status == "True" {
		return available("the CustomResourceDefinition is established")
	}
	if c, ok := condition(obj, "NamesAccepted"); ok && c.status == "False" {
		return notAvailable("the names of the CustomResourceDefinition are not accepted: %s", c.describe())
	}
	if c, ok := condition(obj, "Established"); ok {
		return notAvailable("the CustomResourceDefinition is not established yet: %s", c.describe())
	}
	return notAvailable("the CustomResourceDefinition is not established yet")
}

// pdbAvailability: the controller has seen the latest spec and at least as many pods
// are healthy as the budget requires.
func pdbAvailability(obj *unstructured.Unstructured) Result {
	if r, stale := notObserved(obj); stale {
		return r
	}
	f := fields{obj: obj}
	current := f.int("status.currentHealthy", 0)
	desired := f.int("status.desiredHealthy", 0)
	if f.err != nil {
		return notAvailable("%v", f.err)
	}
	msg := fmt.Sprintf("%d healthy pods, %d required", current, desired)
	if current >= desired {
		return available("%s", msg)
	}
	return notAvailable("%s", msg)
}

// pvcAvailability: the claim is bound to a volume.
func pvcAvailability(obj *unstructured.Unstructured) Result {
	f := fields{obj: obj}
	phase := f.string("status.phase")
	volume := f.string("spec.volumeName")
	if f.err != nil {
		return notAvailable("%v", f.err)
	}
	if phase == "Bound" {
		return available("bound to volume %q", volume)
	}
	if phase == "" {
		phase = "Pending"
	}
	return notAvailable("the claim is %s, not bound yet", phase)
}

// namespaceAvailability: a Namespace is available once it exists, unless it is
// terminating.
func namespaceAvailability(obj *unstructured.Unstructured) Result {
	if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase == "Terminating" {
		return notAvailable("the namespace is terminating")
	}
	return available("Namespace is available once applied")
}

// notObserved reports whether the object's controller has not yet observed its
// latest generation, with a result that says so.
func notObserved(obj *unstructured.Unstructured) (Result, bool) {
	f := fields{obj: obj}
	observed := f.int("status.observedGeneration", 0)
	if f.err != nil {
		return notAvailable("%v", f.err), true
	}
	if gen := obj.GetGeneration(); observed < gen {
		return notAvailable("the controller has not observed generation %d yet (observed %d)", gen, observed), true
	}
	return Result{}, false
}

// fields reads typed fields of an object by dotted path, remembering the first
// error so that a checker can read several fields and test once.
type fields struct {
	obj *unstructured.Unstructured
	err error
}

// int returns the integer at path, or def when it is absent. JSON decoders give
// int64 or float64; both are accepted when they hold a whole number.
func (f *fields) int(path string, def int64) int64 {
	v, ok := f.get(path)
	if !ok || v == nil {
		return def
	}
	switch n := v.(type) {
	case int64:
		return n
	case int32:
		return int64(n)
	case int:
		return int64(n)
	case float64:
		if n == math.Trunc(n) && !math.IsInf(n, 0) {
			return int64(n)
		}
	}
	f.fail(path, fmt.Errorf("%v is not an integer", v))
	return def
}

// string returns the string at path, or "" when it is absent.
func (f *fields) string(path string) string {
	v, ok := f.get(path)
	if !ok || v == nil {
		return ""
	}
	s, isString := v.(string)
	if !isString {
		f.fail(path, fmt.Errorf("%v is not a string", v))
	}
	return s
}

func (f *fields) get(path string) (any, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(f.obj.Object, strings.Split(path, ".")...)
	if err != nil {
		f.fail(path, err)
		return nil, false
	}
	return v, found
}

func (f *fields) fail(path string, err error) {
	if f.err == nil {
		f.err = fmt.Errorf("cannot read %s: %w", path, err)
	}
}

// cond is the part of a status condition the checkers look at.
type cond struct {
	status, reason, message string
}

func (c cond) describe() string {
	switch {
	case c.reason != "" && c.message != "":
		return c.reason + ": " + c.message
	case c.message != "":
		return c.message
	case c.reason != "":
		return c.reason
	default:
		return "no reason given"
	}
}

// condition returns the status condition of type typ of obj.
func condition(obj *unstructured.Unstructured, typ string) (cond, bool) {
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		s, _ := m["status"].(string)
		r, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		return cond{status: s, reason: r, message: msg}, true
	}
	return cond{}, false
}
