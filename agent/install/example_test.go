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
