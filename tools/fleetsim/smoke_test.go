//go:build fleetsim

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

package main

// The small-fleet smoke run (`make fleetsim-smoke`, part of `make test`): a real
// API server, a real hub and five simulated members for about 45 seconds. It has
// its own build tag and target because it builds and runs the hub binary; its
// deadlines (2 min for a failover measured at 4.5 s) are for a hung step, not a
// slow one. It once missed its failover: a joined member whose agent never
// connected could take the replacement (fixed in the hub; README's Scale section).

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

func TestSmallFleet(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	o := defaultOptions()
	o.members, o.placements, o.duration, o.warmup = 5, 3, 10*time.Second, 2*time.Second
	o.kill, o.badMembers = 1, 1
	o.settleTimeout = 2 * time.Minute
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	r, err := run(context.Background(), o, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	data, _ := json.Marshal(r)
	t.Logf("%s", data)
	switch {
	case r.MemberClusterWritesPerMinute != 0:
		t.Errorf("an idle fleet wrote MemberClusters %.1f times a minute: %v", r.MemberClusterWritesPerMinute, r.APIWritesPerMinute)
	case r.PlacementAvailableSeconds == nil || r.PlacementAvailableSeconds.Count != 3:
		t.Errorf("placement times: %+v", r.PlacementAvailableSeconds)
	case r.FailoverSeconds == nil || r.FailoverSeconds.Count == 0:
		t.Errorf("failover times: %+v", r.FailoverSeconds)
	case r.ResyncSeconds == nil || r.ResyncReapplies == nil || *r.ResyncReapplies != 0:
		t.Errorf("re-sync: %v seconds, %v Work sent again (want 0)", r.ResyncSeconds, r.ResyncReapplies)
	case r.BadMembers == nil || r.BadMembers.Closed != 1 || r.BadMembers.OthersDropped != 0:
		t.Errorf("bad members: %+v", r.BadMembers)
	case r.JoinWrites["memberclusters"] < float64(o.members) || r.JoinControllers["membership"] == nil:
		t.Errorf("joining's cost not measured: writes %v, controllers %v", r.JoinWrites, r.JoinControllers)
	case r.HubRSSBytes == 0 || r.HubCPUSeconds == 0:
		t.Errorf("hub usage not measured: %d bytes, %.1f s", r.HubRSSBytes, r.HubCPUSeconds)
	}
}
