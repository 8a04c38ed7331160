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

package fleet

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	ft "github.com/flotilla-io/flotilla/hub/scheduler/framework/frameworktest"
)

func cluster(name string, opts ...ft.ClusterOption) *clusterv1beta1.MemberCluster {
	mc := ft.Cluster(name, opts...)
	return &mc
}

// heartbeat returns a copy of mc that differs only in what the scheduler does
// not read.
func heartbeat(mc *clusterv1beta1.MemberCluster) *clusterv1beta1.MemberCluster {
	out := mc.DeepCopy()
	now := metav1.NewTime(ft.Now.Add(time.Minute))
	out.ResourceVersion += "1"
	out.Status.LastHeartbeatTime = &now
	out.Status.ResourceUsage.ObservationTime = &now
	out.Status.AgentVersion = "v2"
	return out
}

func names(v *View) []string {
	var out []string
	for _, mc := range v.Members() {
		out = append(out, mc.Name)
	}
	return out
}

func TestSnapshotMovesItsGenerationOnlyOnChangesTheSchedulerReads(t *testing.T) {
	base := cluster("a", ft.Labels("env", "prod"))
	cases := []struct {
		name   string
		change func(*clusterv1beta1.MemberCluster) *clusterv1beta1.MemberCluster
		bumps  bool
	}{
		{"a heartbeat changes nothing", heartbeat, false},
		{"the same object changes nothing", func(mc *clusterv1beta1.MemberCluster) *clusterv1beta1.MemberCluster { return mc }, false},
		{"a property's observation time changes nothing", func(mc *clusterv1beta1.MemberCluster) *clusterv1beta1.MemberCluster {
			out := mc.DeepCopy()
			now := metav1.NewTime(ft.Now)
			out.Status.Properties = map[string]clusterv1beta1.PropertyValue{"p": {Value: "1", ObservationTime: &now}}
			return out
		}, true},
		{"a label change bumps", func(mc *clusterv1beta1.MemberCluster) *clusterv1beta1.MemberCluster {
			out := mc.DeepCopy()
			out.Labels["env"] = "dev"
			return out
		}, true},
		{"a taint bumps", func(mc *clusterv1beta1.MemberCluster) *clusterv1beta1.MemberCluster {
			out := mc.DeepCopy()
			ft.Taints(ft.Taint("k", "v", clusterv1beta1.TaintEffectNoSchedule))(out)
			return out
		}, true},
		{"a disconnection bumps", func(mc *clusterv1beta1.MemberCluster) *clusterv1beta1.MemberCluster {
			out := mc.DeepCopy()
			ft.Condition(clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, time.Minute)(out)
			return out
		}, true},
		{"a resource usage change bumps", func(mc *clusterv1beta1.MemberCluster) *clusterv1beta1.MemberCluster {
			out := mc.DeepCopy()
			ft.Resources("cpu", "8", "8", "3")(out)
			return out
		}, true},
		{"a deletion bumps", func(mc *clusterv1beta1.MemberCluster) *clusterv1beta1.MemberCluster {
			out := mc.DeepCopy()
			ft.Leaving()(out)
			return out
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			s.Upsert(base)
			before := s.View()
			if got := s.Upsert(tc.change(base)); got != tc.bumps {
				t.Fatalf("Upsert reported a bump %v, want %v", got, tc.bumps)
			}
			after := s.View()
			if moved := after.Generation() != before.Generation(); moved != tc.bumps {
				t.Errorf("generation moved %v (%d → %d), want %v", moved, before.Generation(), after.Generation(), tc.bumps)
			}
			if !tc.bumps && after != before {
				t.Errorf("an unchanged generation got a new view")
			}
		})
	}
}

func TestSnapshotViewsAreSortedAndNeverChangeOnceTaken(t *testing.T) {
	s := New()
	for _, n := range []string{"c", "a", "b"} {
		s.Upsert(cluster(n))
	}
	v1 := s.View()
	s.Upsert(cluster("aa"))
	s.Delete("b")
	s.Delete("nope")
	s.Upsert(cluster("c", ft.Labels("x", "y")))
	v2 := s.View()
	if diff := cmp.Diff([]string{"a", "b", "c"}, names(v1)); diff != "" {
		t.Errorf("the first view changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "aa", "c"}, names(v2)); diff != "" {
		t.Errorf("the second view (-want +got):\n%s", diff)
	}
	if c, _ := v2.Member("c"); c.Labels["x"] != "y" {
		t.Errorf("the second view holds the old c: %v", c.Labels)
	}
	if c, _ := v1.Member("c"); c.Labels["x"] != "" {
		t.Errorf("the first view sees the new c: %v", c.Labels)
	}
	if v1.Generation() >= v2.Generation() {
		t.Errorf("generations %d then %d, want increasing", v1.Generation(), v2.Generation())
	}
}

func TestSnapshotListsDisconnectedMembers(t *testing.T) {
	s := New()
	s.Upsert(cluster("a"))
	s.Upsert(cluster("b", ft.Condition(clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, time.Minute)))
	s.Upsert(cluster("c", ft.Condition(clusterv1beta1.ConditionAgentConnected, metav1.ConditionFalse, time.Minute)))
	s.Upsert(cluster("c"))
	var got []string
	for _, mc := range s.View().Disconnected {
		got = append(got, mc.Name)
	}
	if diff := cmp.Diff([]string{"b"}, got); diff != "" {
		t.Errorf("disconnected (-want +got):\n%s", diff)
	}
}

// TestSnapshotMatchesTheFleetAfterAnyEvents applies random events and checks
// every view against the fleet built from scratch, and that earlier views keep
// what they showed.
func TestSnapshotMatchesTheFleetAfterAnyEvents(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := New()
		want := map[string]*clusterv1beta1.MemberCluster{}
		type taken struct {
			v     *View
			names []string
		}
		var views []taken
		for range rapid.IntRange(1, 60).Draw(t, "events") {
			name := fmt.Sprintf("m%d", rapid.IntRange(0, 15).Draw(t, "member"))
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				s.Delete(name)
				delete(want, name)
			case 1:
				if old, ok := want[name]; ok {
					s.Upsert(heartbeat(old)) // the view keeps old
					continue
				}
				fallthrough
			default:
				mc := cluster(name, ft.Labels("zone", rapid.SampledFrom([]string{"a", "b"}).Draw(t, "zone")))
				old, ok := want[name]
				changes := !ok || old.Labels["zone"] != mc.Labels["zone"]
				if changes {
					want[name] = mc // otherwise the view keeps old
				}
				if got := s.Upsert(mc); got != changes {
					t.Fatalf("Upsert of %s reported a change %v, want %v", name, got, changes)
				}
			}
			if rapid.Bool().Draw(t, "view") {
				v := s.View()
				views = append(views, taken{v, names(v)})
				wantNames := slices.Sorted(maps.Keys(want))
				if diff := cmp.Diff(wantNames, names(v)); diff != "" {
					t.Fatalf("view (-want +got):\n%s", diff)
				}
				for _, mc := range v.Members() {
					if want[mc.Name] != mc {
						t.Fatalf("view holds a stale %s", mc.Name)
					}
				}
				for _, z := range []string{"a", "b"} {
					var got, exp []string
					for _, at := range v.WithLabel("zone", z) {
						got = append(got, v.Members()[at].Name)
					}
					for _, n := range wantNames {
						if want[n].Labels["zone"] == z {
							exp = append(exp, n)
						}
					}
					if !slices.Equal(exp, got) {
						t.Fatalf("zone=%s index: want %v, got %v", z, exp, got)
					}
				}
			}
		}
		for _, tv := range views {
			if !slices.Equal(tv.names, names(tv.v)) {
				t.Fatalf("a view changed after it was taken: %v, now %v", tv.names, names(tv.v))
			}
		}
	})
}

// TestSnapshotReadersNeverSeeAHalfAppliedUpdate runs writers and readers at
// once (run with -race): every view is sorted, has unique names, and holds
// exactly as many members as the generation it was built at implies.
func TestSnapshotReadersNeverSeeAHalfAppliedUpdate(t *testing.T) {
	s := New()
	const n = 200
	for i := range n {
		s.Upsert(cluster(fmt.Sprintf("m%03d", i)))
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	// The writer toggles pairs: it deletes m<i> and adds m<i>x, then the
	// reverse, so a view always holds n members.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for round := range 300 {
			i := round % n
			a, b := fmt.Sprintf("m%03d", i), fmt.Sprintf("m%03dx", i)
			if round/n%2 == 1 {
				a, b = b, a
			}
			s.Upsert(cluster(b))
			s.Delete(a)
		}
		close(stop)
	}()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				v := s.View()
				ms := v.Members()
				if !slices.IsSortedFunc(ms, byName) {
					t.Errorf("view %d is not sorted", v.Generation())
					return
				}
				for i := 1; i < len(ms); i++ {
					if ms[i-1].Name == ms[i].Name {
						t.Errorf("view %d holds %s twice", v.Generation(), ms[i].Name)
						return
					}
				}
				// Between an Upsert and its Delete a view may hold n+1.
				if len(ms) != n && len(ms) != n+1 {
					t.Errorf("view %d holds %d members, want %d or %d", v.Generation(), len(ms), n, n+1)
					return
				}
				_ = v.WithLabel("zone", "a")
			}
		}()
	}
	wg.Wait()
}
