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

package overrides_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/overrides"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	os.Exit(testenv.Run(m, testenv.Options{}, func(e *testenv.Env) error { env = e; return nil }))
}

func startSnapshots(t *testing.T) {
	env.StartManager(t, func(mgr ctrl.Manager) error {
		if err := (&overrides.SnapshotReconciler{Client: mgr.GetClient(), Cluster: true, History: 2}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&overrides.SnapshotReconciler{Client: mgr.GetClient(), History: 2}).SetupWithManager(mgr)
	})
}

func deleteRule() *placementv1beta1.OverridePolicy {
	return &placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{OverrideType: placementv1beta1.DeleteOverrideType}}}
}

// snapshotState lists snapshots as name=latest-label, by index.
func snapshotState(ctx context.Context, list client.ObjectList, opts ...client.ListOption) (string, error) {
	if err := env.Client.List(ctx, list, opts...); err != nil {
		return "", err
	}
	var items []metav1.Object
	switch l := list.(type) {
	case *placementv1beta1.ClusterResourceOverrideSnapshotList:
		for i := range l.Items {
			items = append(items, &l.Items[i])
		}
	case *placementv1beta1.ResourceOverrideSnapshotList:
		for i := range l.Items {
			items = append(items, &l.Items[i])
		}
	}
	sort.Slice(items, func(i, j int) bool { return overrides.Index(items[i]) < overrides.Index(items[j]) })
	var out []string
	for _, s := range items {
		out = append(out, s.GetName()+"="+s.GetLabels()[placementv1beta1.LabelIsLatestSnapshot])
	}
	return strings.Join(out, " "), nil
}

func expectSnapshots(t *testing.T, list func() client.ObjectList, want string, opts ...client.ListOption) {
	t.Helper()
	testenv.Eventually(t, 20*time.Second, func() error {
		got, err := snapshotState(context.Background(), list(), opts...)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("snapshots %q, want %q", got, want)
		}
		return nil
	})
}

// Every spec change of a ClusterResourceOverride makes the next snapshot the
// latest; a change of metadata only does not; old ones beyond the history go;
// deleting the override deletes its snapshots and then lets it go.
func TestClusterResourceOverrideSnapshots(t *testing.T) {
	ctx := context.Background()
	startSnapshots(t)
	cro := &placementv1beta1.ClusterResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Name: "cro-a"},
		Spec: placementv1beta1.ClusterResourceOverrideSpec{
			ClusterResourceSelectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "Namespace", Name: "a"}},
			Policy:                   deleteRule(),
		},
	}
	testenv.Create(t, env.Client, cro)
	list := func() client.ObjectList { return &placementv1beta1.ClusterResourceOverrideSnapshotList{} }
	byName := client.MatchingLabels{placementv1beta1.LabelOverrideName: "cro-a"}
	expectSnapshots(t, list, "cro-a-0=true", byName)

	snap := &placementv1beta1.ClusterResourceOverrideSnapshot{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: "cro-a-0"}, snap); err != nil {
		t.Fatal(err)
	}
	if snap.Spec.OverrideSpec.ClusterResourceSelectors[0].Name != "a" || snap.Spec.OverrideHash == "" {
		t.Errorf("snapshot spec = %+v", snap.Spec)
	}
	// Snapshots are immutable.
	snap.Spec.OverrideHash = "changed"
	testenv.CheckValidation(t, env.Client.Update(ctx, snap), "spec is immutable")

	// The snapshot controller writes the override's finalizer and status
	// meanwhile: an edit retries on a conflict, as any client's would.
	update := func(mutate func(*placementv1beta1.ClusterResourceOverride)) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cro), cro); err != nil {
				return err
			}
			mutate(cro)
			return env.Client.Update(ctx, cro)
		}); err != nil {
			t.Fatal(err)
		}
	}
	update(func(o *placementv1beta1.ClusterResourceOverride) { o.Labels = map[string]string{"team": "a"} })
	update(func(o *placementv1beta1.ClusterResourceOverride) { o.Spec.ClusterResourceSelectors[0].Name = "b" })
	expectSnapshots(t, list, "cro-a-0=false cro-a-1=true", byName)
	update(func(o *placementv1beta1.ClusterResourceOverride) { o.Spec.ClusterResourceSelectors[0].Name = "c" })
	expectSnapshots(t, list, "cro-a-1=false cro-a-2=true", byName)

	if err := env.Client.Delete(ctx, cro); err != nil {
		t.Fatal(err)
	}
	expectSnapshots(t, list, "", byName)
	testenv.Eventually(t, 20*time.Second, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cro), cro); !apierrors.IsNotFound(err) {
			return fmt.Errorf("override still there (err %w)", err)
		}
		return nil
	})
}

// ResourceOverrides are snapshotted in their own namespace.
func TestResourceOverrideSnapshots(t *testing.T) {
	ctx := context.Background()
	startSnapshots(t)
	testenv.Create(t, env.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-ro"}})
	ro := &placementv1beta1.ResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-ro", Name: "ro-a"},
		Spec: placementv1beta1.ResourceOverrideSpec{
			ResourceSelectors: []placementv1beta1.OverrideResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "cm"}},
			Policy:            deleteRule(),
		},
	}
	testenv.Create(t, env.Client, ro)
	list := func() client.ObjectList { return &placementv1beta1.ResourceOverrideSnapshotList{} }
	expectSnapshots(t, list, "ro-a-0=true", client.InNamespace("team-ro"))
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ro), ro); err != nil {
			return err
		}
		ro.Spec.Placement = &placementv1beta1.PlacementRef{Name: "web"}
		return env.Client.Update(ctx, ro)
	}); err != nil {
		t.Fatal(err)
	}
	expectSnapshots(t, list, "ro-a-0=false ro-a-1=true", client.InNamespace("team-ro"))
	// The latest snapshot deleted by hand is made again.
	key := types.NamespacedName{Namespace: "team-ro", Name: "ro-a-1"}
	old := &placementv1beta1.ResourceOverrideSnapshot{}
	if err := env.Client.Get(ctx, key, old); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, func() error {
		s := &placementv1beta1.ResourceOverrideSnapshot{}
		if err := env.Client.Get(ctx, key, s); err != nil {
			return err
		}
		if s.UID == old.UID {
			return fmt.Errorf("not deleted yet")
		}
		if s.Spec.OverrideSpec.Placement == nil || s.Labels[placementv1beta1.LabelIsLatestSnapshot] != "true" {
			return fmt.Errorf("remade snapshot: %+v %v", s.Spec.OverrideSpec, s.Labels)
		}
		return nil
	})
	expectSnapshots(t, list, "ro-a-0=false ro-a-1=true", client.InNamespace("team-ro"))
}
