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

package apply_test

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/agent/apply"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

// The agent creates one Applier for its member cluster, applies each Work the hub
// sends, polls Status until the Work is available, and removes Works the hub deletes.
// On reconnect it tells the hub what it holds, so that the hub sends only Works whose
// hash differs.
func Example() {
	ctx := context.Background()
	var member *rest.Config          // the member cluster, from the agent's kubeconfig
	work := &placementv1beta1.Work{} // a Work the hub sent

	if err := apply.Register(prometheus.DefaultRegisterer); err != nil {
		fmt.Println(err)
		return
	}
	applier, err := apply.New(member, apply.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}

	status, err := applier.Apply(ctx, work)
	if err != nil {
		fmt.Println("apply did not complete:", err) // status is still worth reporting
	}
	for i := 0; i < 60 && !meta.IsStatusConditionTrue(status.Conditions, placementv1beta1.ConditionAvailable); i++ {
		time.Sleep(5 * time.Second)
		if status, err = applier.Status(ctx, work); err != nil {
			fmt.Println(err)
			return
		}
	}

	records, err := applier.Inventory(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range records {
		fmt.Println(r.WorkName, r.Hash == apply.SpecHash(work))
	}

	if err := applier.Remove(ctx, work.Name); err != nil {
		fmt.Println(err)
	}
}
