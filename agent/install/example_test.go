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

package install_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/agent/install"
)

// Install runs the agent in a member cluster that `agent join` has joined; on
// failure nothing of the agent stays and the error says what is missing.
func ExampleInstall() {
	cfg, err := clientcmd.BuildConfigFromFlags("", "member-1.kubeconfig")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := install.Install(context.Background(), install.Options{Member: cfg, Image: "flotilla-agent:dev"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("agent pod %s runs %s\n", res.Pod, res.Image)
}
