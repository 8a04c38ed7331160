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

package testenv_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// Start is meant for TestMain; see the package documentation. This example shows the
// calls in one function.
func ExampleStart() {
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Println(err)
		}
	}()

	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "member-1"}}
	if err := env.Client.Create(context.Background(), mc); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(mc.Spec.HeartbeatPeriodSeconds)
}
