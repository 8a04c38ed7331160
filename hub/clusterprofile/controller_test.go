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

package clusterprofile

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

const profileNamespace = "fleet-profiles"

func TestTheHubPublishesAProfilePerMember(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	testenv.Create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: profileNamespace}})
	// member-2's profile name is taken by a profile someone else manages.
	foreign := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Name: "member-2", Namespace: profileNamespace},
		Spec: cpv1alpha1.ClusterProfileSpec{DisplayName: "theirs", ClusterManager: cpv1alpha1.ClusterManager{Name: "ocm"}}}
	testenv.Create(t, c, foreign)

	env.StartManager(t, func(mgr ctrl.Manager) error {
		if !Installed(mgr.GetRESTMapper()) {
			return errors.New("Installed says the ClusterProfile CRD is missing")
		}
		return (&Reconciler{Client: client.WithFieldOwner(mgr.GetClient(), FieldManager), Recorder: mgr.GetEventRecorder("clusterprofile"),
			Namespace: profileNamespace, Access: Access{Server: "https://hub.example.com", CAData: []byte("ca")}}).SetupWithManager(mgr)
	})
	testenv.ReadyMember(t, c, "member-1", map[string]string{"env": "prod"})
	testenv.ReadyMember(t, c, "member-2", nil)
	// What a connected agent reports: a version, a provider and properties,
	// one of them without an observation time.
	reported := &clusterv1beta1.MemberCluster{}
	if err := c.Get(ctx, types.NamespacedName{Name: "member-1"}, reported); err != nil {
		t.Fatal(err)
	}
	heartbeat := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	reported.Status.AgentVersion, reported.Status.Provider, reported.Status.KubernetesVersion = "v0.5.0", "kwok", "v1.37.1"
	reported.Status.LastHeartbeatTime = &heartbeat
	reported.Status.Properties = map[string]clusterv1beta1.PropertyValue{
		"flotilla.io/node-count": {Value: "3", ObservationTime: &heartbeat},
		"zone":                   {Value: "eu-1"},
	}
	if err := c.Status().Update(ctx, reported); err != nil {
		t.Fatal(err)
	}

	profile := func(name string) (*cpv1alpha1.ClusterProfile, error) {
		p := &cpv1alpha1.ClusterProfile{}
		return p, c.Get(ctx, types.NamespacedName{Namespace: profileNamespace, Name: name}, p)
	}
	condition := func(p *cpv1alpha1.ClusterProfile, typ string) *metav1.Condition {
		return findCondition(p.Status.Conditions, typ)
	}
	var first *cpv1alpha1.ClusterProfile
	testenv.Eventually(t, 30*time.Second, func() error {
		p, err := profile("member-1")
		if err != nil {
			return err
		}
		h := condition(p, cpv1alpha1.ClusterConditionControlPlaneHealthy)
		if h == nil || h.Status != metav1.ConditionTrue || h.ObservedGeneration != p.Generation {
			return fmt.Errorf("ControlPlaneHealthy %+v, want True at generation %d", h, p.Generation)
		}
		if p.Labels["env"] != "prod" || p.Labels[cpv1alpha1.LabelClusterManagerKey] != ClusterManager {
			return fmt.Errorf("labels %v", p.Labels)
		}
		if len(p.Status.AccessProviders) != 1 || p.Status.AccessProviders[0].Cluster.Server != "https://hub.example.com/apis/proxy.flotilla.io/v1beta1/memberclusters/member-1/proxy" {
			return fmt.Errorf("access providers %+v", p.Status.AccessProviders)
		}
		if len(p.Status.Properties) != 4 || p.Status.Version.Kubernetes != "v1.37.1" {
			return fmt.Errorf("properties %+v, version %q; want the member's 2 and agent version and provider, v1.37.1", p.Status.Properties, p.Status.Version.Kubernetes)
		}
		for _, prop := range p.Status.Properties {
			if prop.LastObservedTime.IsZero() {
				return fmt.Errorf("property %s has no observation time", prop.Name)
			}
		}
		if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "MemberCluster" || p.OwnerReferences[0].Name != "member-1" {
			return fmt.Errorf("owner references %+v, want the MemberCluster (so the profile goes with it)", p.OwnerReferences)
		}
		first = p
		return nil
	})

	// Nothing is written while nothing changes: an annotation on the member
	// sends it through the controller again.
	patchMember(t, "member-1", func(m *clusterv1beta1.MemberCluster) { m.Annotations = map[string]string{"touched": "yes"} })
	testenv.Consistently(t, 2*time.Second, func() error {
		p, err := profile("member-1")
		if err != nil {
			return err
		}
		if p.ResourceVersion != first.ResourceVersion {
			return fmt.Errorf("the profile was written again (resourceVersion %s → %s) with nothing changed", first.ResourceVersion, p.ResourceVersion)
		}
		return nil
	})

	// The member loses its agent: its health is not known now.
	m := &clusterv1beta1.MemberCluster{}
	if err := c.Get(ctx, types.NamespacedName{Name: "member-1"}, m); err != nil {
		t.Fatal(err)
	}
	conditions.Set(&m.Status.Conditions, clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, "HeartbeatMissed", "no heartbeat for 30s", m.Generation)
	if err := c.Status().Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	// And a label changes.
	patchMember(t, "member-1", func(m *clusterv1beta1.MemberCluster) { m.Labels["env"] = "staging" })
	testenv.Eventually(t, 30*time.Second, func() error {
		p, err := profile("member-1")
		if err != nil {
			return err
		}
		if h := condition(p, cpv1alpha1.ClusterConditionControlPlaneHealthy); h == nil || h.Status != metav1.ConditionUnknown || h.Reason != ReasonAgentNotConnected {
			return fmt.Errorf("ControlPlaneHealthy %+v, want Unknown %s", h, ReasonAgentNotConnected)
		}
		if p.Labels["env"] != "staging" {
			return fmt.Errorf("label env=%q, want staging", p.Labels["env"])
		}
		return nil
	})

	// A profile deleted by hand is put back.
	if err := c.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		p, err := profile("member-1")
		if err != nil {
			return err
		}
		if p.UID == first.UID {
			return errors.New("still the deleted profile")
		}
		return nil
	})

	// The foreign profile is left as it was, and the member says why.
	testenv.Eventually(t, 30*time.Second, func() error {
		evs := &eventsv1.EventList{}
		if err := c.List(ctx, evs); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == "member-2" && e.Reason == EventClusterProfileNotManaged {
				return nil
			}
		}
		return errors.New("no ClusterProfileNotManaged Event on member-2")
	})
	p, err := profile("member-2")
	if err != nil {
		t.Fatal(err)
	}
	if p.ResourceVersion != foreign.ResourceVersion || p.Spec.DisplayName != "theirs" || len(p.Status.Conditions) != 0 {
		t.Errorf("the profile Flotilla did not create was changed: %+v", p)
	}
}

func patchMember(t *testing.T, name string, edit func(*clusterv1beta1.MemberCluster)) {
	t.Helper()
	m := &clusterv1beta1.MemberCluster{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, m); err != nil {
		t.Fatal(err)
	}
	before := m.DeepCopy()
	edit(m)
	if err := env.Client.Patch(context.Background(), m, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}
