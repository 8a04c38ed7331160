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

package cli

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/flotilla-io/flotilla/pkg/testenv"
)

var (
	env *testenv.Env
	// kubeconfig is a kubeconfig file of the test API server, for the commands'
	// --kubeconfig flag.
	kubeconfig string
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	dir, err := os.MkdirTemp("", "flotilla-cli-")
	if err != nil {
		panic(err)
	}
	code := testenv.Run(m, testenv.Options{Scheme: Scheme()}, func(e *testenv.Env) error {
		env = e
		kubeconfig = filepath.Join(dir, "kubeconfig")
		return clientcmd.WriteToFile(clientcmdapi.Config{
			Clusters:       map[string]*clientcmdapi.Cluster{"hub": {Server: e.Config.Host, CertificateAuthorityData: e.Config.CAData}},
			AuthInfos:      map[string]*clientcmdapi.AuthInfo{"admin": {ClientCertificateData: e.Config.CertData, ClientKeyData: e.Config.KeyData}},
			Contexts:       map[string]*clientcmdapi.Context{"hub": {Cluster: "hub", AuthInfo: "admin"}},
			CurrentContext: "hub",
		}, kubeconfig)
	})
	// os.Exit skips deferred calls: remove the folder first.
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
