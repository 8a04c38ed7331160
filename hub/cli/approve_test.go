package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// approvalRequestCRD is a stand-in for the CRD of staged update runs: the kind
// and status subresource approve relies on, nothing more.
func approvalRequestCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "clusterapprovalrequests." + placementv1beta1.GroupVersion.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: placementv1beta1.GroupVersion.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "clusterapprovalrequests", Singular: "clusterapprovalrequest", Kind: approvalRequestKind, ListKind: approvalRequestKind + "List"},
			Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: placementv1beta1.GroupVersion.Version, Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
}

func TestApprove(t *testing.T) {
	ctx := context.Background()
	t.Run("a hub without staged update runs says so", func(t *testing.T) {
		_, err := runCommand(t, "approve", "run-1-canary")
		want := "the hub does not serve ClusterApprovalRequest (placement.flotilla.io/v1beta1): staged update runs are not installed on it"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("approve = %v, want an error starting %q", err, want)
		}
	})

	t.Run("-n is refused: approval requests are cluster-scoped", func(t *testing.T) {
		if _, err := runCommand(t, "approve", "run-1-canary", "-n", "default"); err == nil || !strings.Contains(err.Error(), "cluster-scoped") {
			t.Errorf("approve -n = %v", err)
		}
	})

	sc := Scheme()
	if err := apiextensionsv1.AddToScheme(sc); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: sc})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, approvalRequestCRD()); err != nil {
		t.Fatal(err)
	}
	dc := dynamic.NewForConfigOrDie(env.Config)
	res := dc.Resource(schema.GroupVersionResource{Group: placementv1beta1.GroupVersion.Group, Version: placementv1beta1.GroupVersion.Version, Resource: "clusterapprovalrequests"})
	req := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": placementv1beta1.GroupVersion.String(), "kind": approvalRequestKind,
		"metadata": map[string]any{"name": "run-1-canary", "labels": map[string]any{labelApprovalUpdateRun: "run-1", labelApprovalTargetStage: "canary"}},
		"spec":     map[string]any{"parentStageRollout": "run-1", "targetStage": "canary"},
	}}
	testenv.Eventually(t, 30*time.Second, func() error {
		_, err := res.Create(ctx, req, metav1.CreateOptions{})
		return err
	})

	t.Run("approve sets Approved=True on the status, once", func(t *testing.T) {
		out, err := runCommand(t, "approve", "run-1-canary")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if want := "ClusterApprovalRequest run-1-canary approved: update run run-1 may go on after stage canary\n"; out != want {
			t.Errorf("output = %q, want %q", out, want)
		}
		got, err := res.Get(ctx, "run-1-canary", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		if len(conds) != 1 || fmt.Sprintf("%v %v", conds[0].(map[string]any)["type"], conds[0].(map[string]any)["status"]) != "Approved True" {
			t.Errorf("status.conditions = %v", conds)
		}
		out, err = runCommand(t, "approve", "run-1-canary")
		if err != nil || !strings.Contains(out, "is already approved") {
			t.Errorf("second approve = %v: %q", err, out)
		}
	})

	t.Run("an approval request that does not exist", func(t *testing.T) {
		if _, err := runCommand(t, "approve", "nope"); err == nil || err.Error() != "ClusterApprovalRequest nope not found" {
			t.Errorf("approve nope = %v", err)
		}
	})
}
