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

package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// The plugin names the kind, condition and labels itself rather than importing
// them (see approve.go); they must stay those of the API.
func TestApproveNamesMatchTheAPI(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{conditionApproved, placementv1beta1.ConditionApprovalRequestApprovedByUser},
		{labelApprovalUpdateRun, placementv1beta1.LabelUpdateRun},
		{labelApprovalTargetStage, placementv1beta1.LabelStage},
	} {
		if tc.got != tc.want {
			t.Errorf("the plugin uses %q, the API %q", tc.got, tc.want)
		}
	}
}

func TestApprove(t *testing.T) {
	ctx := context.Background()
	c, err := client.New(env.Config, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// An approval request as a staged update run creates it.
	req := &placementv1beta1.ClusterApprovalRequest{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "run-1-canary",
			Labels: map[string]string{placementv1beta1.LabelUpdateRun: "run-1", placementv1beta1.LabelStage: "canary"},
		},
		Spec: placementv1beta1.ApprovalRequestSpec{ParentStageRollout: "run-1", TargetStage: "canary"},
	}
	if err := c.Create(ctx, req); err != nil {
		t.Fatal(err)
	}

	t.Run("approve sets Approved=True on the status, once", func(t *testing.T) {
		out, err := runCommand(t, "approve", "run-1-canary", "--message", "canary looks good")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if want := "ClusterApprovalRequest run-1-canary approved: update run run-1 may go on after stage canary\n"; out != want {
			t.Errorf("output = %q, want %q", out, want)
		}
		got := &placementv1beta1.ClusterApprovalRequest{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(req), got); err != nil {
			t.Fatal(err)
		}
		approved := conditions.Get(got.Status.Conditions, placementv1beta1.ConditionApprovalRequestApprovedByUser)
		if approved == nil || approved.Status != metav1.ConditionTrue || approved.Reason != reasonApprovedByKubectl ||
			approved.Message != "canary looks good" || approved.ObservedGeneration != got.Generation {
			t.Errorf("Approved condition = %+v, want True, %s, %q at generation %d", approved, reasonApprovedByKubectl, "canary looks good", got.Generation)
		}
		out, err = runCommand(t, "approve", "run-1-canary")
		if err != nil || !strings.Contains(out, "is already approved") {
			t.Errorf("second approve = %v: %q", err, out)
		}
	})

	t.Run("approve keeps the run's own conditions", func(t *testing.T) {
		other := req.DeepCopy()
		other.ResourceVersion = ""
		other.Name = "run-1-prod"
		other.Labels[placementv1beta1.LabelStage] = "prod"
		other.Spec.TargetStage = "prod"
		if err := c.Create(ctx, other); err != nil {
			t.Fatal(err)
		}
		conditions.Set(&other.Status.Conditions, "SomethingOfTheRun", metav1.ConditionTrue, "ByTheRun", "kept", other.Generation)
		if err := c.Status().Update(ctx, other); err != nil {
			t.Fatal(err)
		}
		if out, err := runCommand(t, "approve", "run-1-prod"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		got := &placementv1beta1.ClusterApprovalRequest{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(other), got); err != nil {
			t.Fatal(err)
		}
		if !conditions.IsTrue(got.Status.Conditions, placementv1beta1.ConditionApprovalRequestApprovedByUser) || !conditions.IsTrue(got.Status.Conditions, "SomethingOfTheRun") {
			t.Errorf("status.conditions = %+v, want Approved=True and the run's condition kept", got.Status.Conditions)
		}
	})

	t.Run("an approval request that does not exist", func(t *testing.T) {
		if _, err := runCommand(t, "approve", "nope"); err == nil || err.Error() != "ClusterApprovalRequest nope not found" {
			t.Errorf("approve nope = %v", err)
		}
	})

	t.Run("-n is refused: approval requests are cluster-scoped", func(t *testing.T) {
		if _, err := runCommand(t, "approve", "run-1-canary", "-n", "default"); err == nil || !strings.Contains(err.Error(), "cluster-scoped") {
			t.Errorf("approve -n = %v", err)
		}
	})

	t.Run("a hub without staged update runs says so", func(t *testing.T) {
		// A hub whose API server does not know the kind (an older Flotilla).
		mapper := meta.NewDefaultRESTMapper(nil)
		var out bytes.Buffer
		err := approve(ctx, dynamic.NewForConfigOrDie(env.Config), mapper, "run-1-canary", "", &out)
		want := "the hub does not serve ClusterApprovalRequest (placement.flotilla.io/v1beta1): staged update runs are not installed on it"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("approve = %v, want an error starting %q", err, want)
		}
	})
}
