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
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// The approval kind of staged update runs, and its condition (API.md). They are
// named here, not imported, so that approve works against any hub that serves
// the kind, and says clearly when one does not.
const (
	approvalRequestKind      = "ClusterApprovalRequest"
	conditionApproved        = "Approved"
	reasonApprovedByKubectl  = "ApprovedByUser"
	labelApprovalUpdateRun   = "placement.flotilla.io/update-run"
	labelApprovalTargetStage = "placement.flotilla.io/stage"
)

func newApproveCommand(cfg *Config) *cobra.Command {
	var message string
	cmd := &cobra.Command{
		Use:   "approve <approval-request>",
		Short: "Approve a stage of a staged update run (sets the ClusterApprovalRequest's Approved condition)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ns, ok := cfg.Namespace(); ok {
				return fmt.Errorf("%ss are cluster-scoped: -n %s does not apply", approvalRequestKind, ns)
			}
			dc, c, err := cfg.Dynamic()
			if err != nil {
				return err
			}
			return approve(cmd.Context(), dc, c.RESTMapper(), args[0], message, cfg.Out)
		},
	}
	cmd.Flags().StringVar(&message, "message", "approved with kubectl flotilla approve", "The Approved condition's message.")
	return cmd
}

// approve sets Approved=True on the approval request's status.
func approve(ctx context.Context, dc dynamic.Interface, mapper meta.RESTMapper, name, message string, out io.Writer) error {
	gk := schema.GroupKind{Group: placementv1beta1.GroupVersion.Group, Kind: approvalRequestKind}
	mapping, err := mapper.RESTMapping(gk, placementv1beta1.GroupVersion.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return fmt.Errorf("the hub does not serve %s (%s): staged update runs are not installed on it; install the CRDs of a Flotilla version that has them",
				approvalRequestKind, placementv1beta1.GroupVersion)
		}
		return fmt.Errorf("failed to find the %s kind: %w", approvalRequestKind, err)
	}
	res := dc.Resource(mapping.Resource)
	already := false
	var obj *unstructured.Unstructured
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err = res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		raw, _, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
		if err != nil {
			return fmt.Errorf("%s %s has malformed status.conditions: %w", approvalRequestKind, name, err)
		}
		var conds []metav1.Condition
		for _, r := range raw {
			m, ok := r.(map[string]any)
			if !ok {
				continue
			}
			var c metav1.Condition
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err != nil {
				return fmt.Errorf("%s %s has a malformed condition: %w", approvalRequestKind, name, err)
			}
			conds = append(conds, c)
		}
		if conditions.IsTrue(conds, conditionApproved) {
			already = true
			return nil
		}
		conditions.Set(&conds, conditionApproved, metav1.ConditionTrue, reasonApprovedByKubectl, message, obj.GetGeneration())
		list := make([]any, 0, len(conds))
		for i := range conds {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conds[i])
			if err != nil {
				return err
			}
			list = append(list, m)
		}
		if err := unstructured.SetNestedSlice(obj.Object, list, "status", "conditions"); err != nil {
			return err
		}
		_, err = res.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: "kubectl-flotilla"})
		return err
	})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s %s not found", approvalRequestKind, name)
	case err != nil:
		return fmt.Errorf("failed to approve %s %s: %w", approvalRequestKind, name, err)
	}
	// The spec says what the request approves (the run reads it too); the
	// labels are for selecting and may be shortened.
	run, _, _ := unstructured.NestedString(obj.Object, "spec", "parentStageRollout")
	stage, _, _ := unstructured.NestedString(obj.Object, "spec", "targetStage")
	what := ""
	if run != "" && stage != "" {
		what = fmt.Sprintf(": update run %s may go on after stage %s", run, stage)
	}
	if already {
		fmt.Fprintf(out, "%s %s is already approved%s\n", approvalRequestKind, name, what)
		return nil
	}
	fmt.Fprintf(out, "%s %s approved%s\n", approvalRequestKind, name, what)
	return nil
}
