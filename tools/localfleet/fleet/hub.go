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
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	hubNamespace      = "flotilla-system"
	hubServiceAccount = "flotilla-hub"
)

// installHub applies manifests/hub to the hub cluster, as a user would, and waits
// until every Flotilla CRD is Established.
func (f *Fleet) installHub(ctx context.Context) error {
	return f.applyHubManifests(ctx, f.opts.HubManifests)
}

func (f *Fleet) applyHubManifests(ctx context.Context, dir string) error {
	if _, err := kubectl(ctx, f.HubKubeconfig(), "apply", "-k", dir); err != nil {
		return err
	}
	out, err := kubectl(ctx, f.HubKubeconfig(), "get", "crds", "-o", "name")
	if err != nil {
		return err
	}
	var crds []string
	for _, name := range strings.Fields(out) {
		if strings.HasSuffix(name, ".flotilla.io") {
			crds = append(crds, name)
		}
	}
	if len(crds) == 0 {
		return fmt.Errorf("no flotilla.io CRDs after applying manifests/hub")
	}
	args := append([]string{"wait", "--for", "condition=Established", "--timeout", "60s"}, crds...)
	_, err = kubectl(ctx, f.HubKubeconfig(), args...)
	return err
}

// writeServiceAccountKubeconfig writes a kubeconfig for the hub cluster whose
// credential is a token of the hub's ServiceAccount, so that the hub process has
// exactly the RBAC that manifests/hub grants.
func (f *Fleet) writeServiceAccountKubeconfig(ctx context.Context) error {
	token, err := kubectl(ctx, f.HubKubeconfig(), "create", "token", hubServiceAccount,
		"--namespace", hubNamespace, "--duration", "720h")
	if err != nil {
		return err
	}
	admin, err := clientcmd.LoadFromFile(f.HubKubeconfig())
	if err != nil {
		return fmt.Errorf("failed to read %s: %w", f.HubKubeconfig(), err)
	}
	kctx, ok := admin.Contexts[admin.CurrentContext]
	if !ok {
		return fmt.Errorf("%s has no current context", f.HubKubeconfig())
	}
	cluster := admin.Clusters[kctx.Cluster]
	if cluster == nil {
		return fmt.Errorf("%s: context %s names no cluster", f.HubKubeconfig(), admin.CurrentContext)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = cluster
	cfg.AuthInfos[hubServiceAccount] = &clientcmdapi.AuthInfo{Token: strings.TrimSpace(token)}
	cfg.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: hubServiceAccount, Namespace: hubNamespace}
	cfg.CurrentContext = "hub"
	return clientcmd.WriteToFile(*cfg, f.HubServiceAccountKubeconfig())
}

// startHub runs the hub binary as local processes (Options.HubReplicas, behind
// the tunnel balancer when there are several) with the ServiceAccount's
// kubeconfig and waits until each reports ready.
func (f *Fleet) startHub(ctx context.Context, st *State) error {
	if err := f.writeServiceAccountKubeconfig(ctx); err != nil {
		return err
	}
	proxyHost := ""
	if hubServesProxy(ctx, f.hubBinary) {
		host, err := hostAddress()
		if err != nil {
			return err
		}
		proxyHost = host
	}
	for i := range f.opts.HubReplicas {
		r, err := newHubReplica(i)
		if err != nil {
			return err
		}
		if proxyHost != "" {
			if r.ProxyAddress, err = freeHostAddress(proxyHost); err != nil {
				return err
			}
		}
		st.HubReplicas = append(st.HubReplicas, r)
	}
	st.HubTunnelAddress = st.HubReplicas[0].TunnelAddress
	if f.opts.HubReplicas > 1 || f.opts.TunnelBalancer {
		if err := f.startBalancer(ctx, st); err != nil {
			return err
		}
	}
	st.HubMetricsAddress, st.HubHealthAddress = st.HubReplicas[0].MetricsAddress, st.HubReplicas[0].HealthAddress
	for i := range st.HubReplicas {
		if err := f.startHubReplica(ctx, st, i); err != nil {
			return err
		}
	}
	return nil
}

// startHubReplica runs replica i of the hub and waits until it is ready.
func (f *Fleet) startHubReplica(ctx context.Context, st *State, i int) error {
	r := st.HubReplicas[i]
	args := append([]string{
		"--kubeconfig", f.HubServiceAccountKubeconfig(),
		"--namespace", hubNamespace,
		"--replica-name", r.Name,
		"--tunnel-bind-address", r.TunnelAddress,
		"--metrics-bind-address", r.MetricsAddress,
		"--health-probe-bind-address", r.HealthAddress,
	}, f.opts.HubArgs...)
	if r.ProxyAddress != "" && hubServesProxy(ctx, f.hubBinary) {
		args = append(args, "--proxy-bind-address", r.ProxyAddress)
	}
	profileArgs, err := f.clusterProfileArgs(ctx)
	if err != nil {
		return err
	}
	args = append(args, profileArgs...)
	if st.PrometheusURL != "" {
		args = append(args, "--prometheus-url", st.PrometheusURL)
	}
	if st.BalancerControlAddress != "" {
		// Join commands name the balancer, which every replica sits behind.
		args = append(args, "--tunnel-advertise-address", st.HubTunnelAddress)
	}
	p, err := startProcess(f.hubBinary, args, filepath.Join(f.LogDir(), r.Role+".log"), nil)
	if err != nil {
		return err
	}
	st.Processes[r.Role] = p
	if err := f.saveState(st); err != nil {
		return err
	}
	if err := f.writeScrapeTargets(st); err != nil {
		return err
	}
	return waitFor(ctx, 60*time.Second, func() error {
		select {
		case <-p.exited:
			return fmt.Errorf("hub replica %s exited; see %s", r.Name, p.LogFile)
		default:
		}
		resp, err := http.Get("http://" + r.HealthAddress + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("hub replica %s /readyz answered %s", r.Name, resp.Status)
		}
		return nil
	})
}
