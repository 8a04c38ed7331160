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

package session_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/agent/session/sessiontest"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// An agent that restarts states the Works its records keep, with their
// hashes, so the hub sends them no more; it goes on watching them all the
// same (a drifted object is corrected) and reports their status. A record
// written before records kept their Work (an older agent's) is stated
// without a hash: the hub sends that Work once, and its record keeps it from
// then on.
func TestARestartedAgentResumesItsWorksWithoutTheHubSendingThemAgain(t *testing.T) {
	ctx := testContext(t)
	records := fmt.Sprintf("records-%d", time.Now().UnixNano())
	t.Cleanup(func() { deleteObject(t, "configmaps", "resumed"); deleteObject(t, "configmaps", "older") })
	hub := sessiontest.Start(t, sessiontest.Options{})

	first := startAgentIn(t, hub, nil, records, true)
	s1 := hub.NextSession(t, wait)
	resumed := configMapWork(t, "resumed", "default", "resumed", map[string]string{"color": "blue"})
	older := configMapWork(t, "older", "default", "older", map[string]string{"color": "red"})
	resumedHash, err := s1.Upsert(resumed)
	if err != nil {
		t.Fatal(err)
	}
	olderHash, err := s1.Upsert(older)
	if err != nil {
		t.Fatal(err)
	}
	if err := s1.SyncDone(); err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, wait, reportedWith(s1, "resumed", resumedHash, placementv1beta1.ConditionApplied, metav1.ConditionTrue))
	sessiontest.Eventually(t, wait, reportedWith(s1, "older", olderHash, placementv1beta1.ConditionApplied, metav1.ConditionTrue))
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	// "older" as an agent before this change left it: no Work in its record.
	rec, err := kube.CoreV1().ConfigMaps(records).Get(ctx, "work-older", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Data["workObject"] == "" {
		t.Fatalf("the record of a Work applied in full keeps no Work: %v", rec.Data)
	}
	delete(rec.Data, "workObject")
	if _, err := kube.CoreV1().ConfigMaps(records).Update(ctx, rec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rv := configMapResourceVersion(t, "default", "resumed")

	second := startAgentIn(t, hub, nil, records, true)
	s2 := hub.NextSession(t, wait)
	want := []tunnel.WorkRef{{Name: "older"}, {Name: "resumed", Namespace: resumed.Namespace, Hash: resumedHash}}
	if diff := cmp.Diff(want, s2.Inventory.Items); diff != "" {
		t.Errorf("inventory after a restart (-want +got):\n%s", diff)
	}
	// The hub sends what the inventory lacks: only "older".
	if _, err := s2.Upsert(older); err != nil {
		t.Fatal(err)
	}
	if err := s2.SyncDone(); err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, wait, reportedWith(s2, "resumed", resumedHash, placementv1beta1.ConditionAvailable, metav1.ConditionTrue))
	sessiontest.Eventually(t, wait, reportedWith(s2, "older", olderHash, placementv1beta1.ConditionAvailable, metav1.ConditionTrue))
	if got := configMapResourceVersion(t, "default", "resumed"); got != rv {
		t.Errorf("the resumed Work's ConfigMap was written by the restart: resourceVersion %s, was %s", got, rv)
	}

	// The resumed Work is watched: drift is corrected without the hub.
	cm, err := kube.CoreV1().ConfigMaps("default").Get(ctx, "resumed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = "drifted"
	if _, err := kube.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	sessiontest.Eventually(t, wait, func() error {
		cm, err := kube.CoreV1().ConfigMaps("default").Get(context.Background(), "resumed", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data["color"] != "blue" {
			return fmt.Errorf("color %q, want the Work's blue back", cm.Data["color"])
		}
		return nil
	})

	// The older record keeps its Work now: the next restart resumes both.
	if err := second.stop(); err != nil {
		t.Fatal(err)
	}
	startAgentIn(t, hub, nil, records, true)
	s3 := hub.NextSession(t, wait)
	want = []tunnel.WorkRef{{Name: "older", Namespace: older.Namespace, Hash: olderHash}, {Name: "resumed", Namespace: resumed.Namespace, Hash: resumedHash}}
	if diff := cmp.Diff(want, s3.Inventory.Items); diff != "" {
		t.Errorf("inventory after a second restart (-want +got):\n%s", diff)
	}
}
