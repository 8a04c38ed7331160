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
	"crypto/tls"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/testenv"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// An agent that accepts frames of at most 4 KiB is sent a Work of about 16 KiB:
// the hub does not drop it silently but says so on the Work (Applied=False,
// WorkTooLarge), and keeps serving the session (the small Work after it still
// arrives).
func TestAWorkTooLargeToSendIsReportedOnTheWork(t *testing.T) {
	ctx := context.Background()
	addr := startServer(t)
	cert, pool := joinMember(t, addr, "small-frames")
	ns := clusterv1beta1.MemberNamespace("small-frames")
	mk := func(name string, size int) {
		w := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		w.Spec.Workload.Manifests = []placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"default"},"data":{"k":"` + strings.Repeat("x", size) + `"}}`)}}}
		testenv.Create(t, env.Client, w)
	}
	mk("big", 16<<10)
	mk("small", 10)
	s, err := tunnel.Dial(ctx, tunnel.DialOptions{
		Address:   addr,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{tunnel.ALPNTunnel}},
		ClientOptions: tunnel.ClientOptions{Hello: tunnel.Hello{ClusterName: "small-frames", AgentVersion: "test"},
			MaxFrameSize: 4 << 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Work().Send(tunnel.WorkInventory{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) == 0 || got[len(got)-1] != "done" {
		m, err := s.Work().Recv()
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		switch msg := m.(type) {
		case tunnel.WorkUpsert:
			got = append(got, "upsert "+msg.Name)
		case tunnel.WorkSyncDone:
			got = append(got, "done")
		}
	}
	if fmt.Sprint(got) != "[upsert small done]" {
		t.Errorf("the agent was sent %v, want only the small Work and done", got)
	}
	testenv.Eventually(t, 20*time.Second, func() error {
		w := &placementv1beta1.Work{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "big"}, w); err != nil {
			return err
		}
		applied := conditions.Get(w.Status.Conditions, placementv1beta1.ConditionApplied)
		if applied == nil || applied.Status != metav1.ConditionFalse || applied.Reason != placementv1beta1.ReasonWorkTooLarge {
			return fmt.Errorf("the Work too large to send has Applied %+v, want False %s", applied, placementv1beta1.ReasonWorkTooLarge)
		}
		return nil
	})
}
