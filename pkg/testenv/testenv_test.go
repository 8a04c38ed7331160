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

package testenv

import (
	"context"
	"strings"
	"testing"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
)

func TestStartWithoutBinariesSaysToRunMakeTools(t *testing.T) {
	_, err := Start(Options{BinaryAssetsDirectory: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "run `make tools`") {
		t.Fatalf("got error %v, want one that says to run `make tools`", err)
	}
}

func TestStartServesTheCRDs(t *testing.T) {
	env, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
		if err := env.Stop(); err != nil {
			t.Errorf("a second Stop failed: %v", err)
		}
	}()
	ctx := context.Background()
	if err := env.Client.List(ctx, &clusterv1beta1.MemberClusterList{}); err != nil {
		t.Errorf("failed to list member clusters: %v", err)
	}
	if err := env.Client.List(ctx, &placementv1beta1.ClusterResourcePlacementList{}); err != nil {
		t.Errorf("failed to list placements: %v", err)
	}
}
