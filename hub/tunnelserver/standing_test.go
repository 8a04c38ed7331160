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

package tunnelserver

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// errCutOff is what a replica cut off from its API server gets.
var errCutOff = errors.New("dial tcp: connect: connection refused (the test cut this replica off from its API server)")

// cuttableClient is an uncached client of the test API server whose every
// call fails while cut is set: a replica cut off from its API server.
func cuttableClient(t *testing.T, cut *atomic.Bool) client.Client {
	t.Helper()
	w, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return interceptor.NewClient(w, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if cut.Load() {
				return errCutOff
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if cut.Load() {
				return errCutOff
			}
			return c.List(ctx, list, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if cut.Load() {
				return errCutOff
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if cut.Load() {
				return errCutOff
			}
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if cut.Load() {
				return errCutOff
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if cut.Load() {
				return errCutOff
			}
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if cut.Load() {
				return errCutOff
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if cut.Load() {
				return errCutOff
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}

// A replica cut off from its API server stops answering its agents before the
// leader can count its Lease expired: it ends their sessions, refuses new ones
// and fails its readiness check, so that their heartbeats go unanswered and
// their fencing leases run (or they move to a replica that stands). Once it
// renews its Lease again it serves again, and records a member that did not
// come back as disconnected, since no sweep did.
func TestAReplicaThatCannotRenewItsLeaseStopsServingUntilItCan(t *testing.T) {
	var cut atomic.Bool
	const leaseDuration = 3 * time.Second
	addr, srv := startServerOn(t, Options{ReplicaName: "cut-off", ReplicaLeaseDuration: leaseDuration}, cuttableClient(t, &cut))
	cert, pool := joinMember(t, addr, "cut-member")
	s := connected(t, addr, "cut-member", cert, pool)
	testenv.Eventually(t, 10*time.Second, func() error {
		if as := member(t, "cut-member").Status.AgentSession; as == nil || as.HubReplica != "cut-off" {
			return fmt.Errorf("agentSession = %+v", as)
		}
		return nil
	})
	if err := srv.ReadyCheck(nil); err != nil {
		t.Fatalf("ready check of a standing replica: %v", err)
	}

	cut.Store(true)
	cutAt := time.Now()
	waitSessionEnd(t, s, "the session of a replica that cannot renew its Lease")
	t.Logf("the replica ended the session %s after it was cut off (it stops at %s, the leader counts it gone at %s)",
		time.Since(cutAt).Round(time.Millisecond), 2*leaseDuration/3, leaseDuration)
	if err := srv.ReadyCheck(nil); err == nil {
		t.Error("the ready check of a replica that cannot renew its Lease passes")
	}
	err := tryDial(addr, "cut-member", cert, pool)
	if err == nil {
		t.Fatal("a replica that cannot renew its Lease accepted a session")
	}
	wantRefusal(t, err.Error(), "hub replica cut-off could not renew its Lease", "redial another replica")

	cut.Store(false)
	testenv.Eventually(t, 15*time.Second, func() error { return srv.ReadyCheck(nil) })
	testenv.Eventually(t, 10*time.Second, func() error {
		mc := member(t, "cut-member")
		c := conditionOf(mc, clusterv1beta1.ConditionAgentConnected)
		if c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("AgentConnected = %+v, want False once the replica renewed its Lease (the member did not come back)", c)
		}
		return nil
	})
	connect(t, addr, "cut-member", cert, pool)
	testenv.Eventually(t, 10*time.Second, func() error {
		c := conditionOf(member(t, "cut-member"), clusterv1beta1.ConditionAgentConnected)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("AgentConnected = %+v, want True after the member reconnected", c)
		}
		return nil
	})
}
