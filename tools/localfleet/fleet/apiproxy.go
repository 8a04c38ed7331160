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

// The hub's API proxy on a kwok fleet (docs/how-to/reach-members.md). The hub
// runs as a process on this machine, outside its cluster, so the fleet wires
// the hub cluster's kube-apiserver to it the way a cluster that runs the hub
// is wired, with three differences a kwok cluster needs:
//
//   - kube-apiserver runs with the front proxy's request-header flags
//     (kwokctl gives it a client certificate, --proxy-client-cert-file, but no
//     --requestheader-client-ca-file) and with --enable-aggregator-routing, so
//     it dials the endpoints of Service flotilla-hub rather than its cluster
//     IP, which nothing routes on kwok;
//   - Service flotilla-hub has no selector (the Deployment's pods are kwok's
//     fakes) nor the endpoints it had, and an EndpointSlice the fleet owns
//     points its proxy port at the first hub process;
//   - that endpoint is this machine's first non-loopback IPv4 address, since
//     an endpoint may not be a loopback address; the hub listens there only.
//
// The APIService is manifests/hub/proxy/apiservice.yaml, applied as is.

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// kwokAdminUser is the common name of the admin certificate kwokctl makes,
// which its kube-apiserver also presents to aggregated API servers.
const kwokAdminUser = "kwok-admin"

// proxyEndpointSlice is the EndpointSlice of Service flotilla-hub that the
// fleet owns.
const proxyEndpointSlice = "flotilla-hub-localfleet"

// aggregationArgs are the kwokctl create cluster flags that let the hub
// cluster's kube-apiserver forward aggregated APIs to a hub process.
func (f *Fleet) aggregationArgs(cluster string) []string {
	ca := filepath.Join(f.opts.Dir, "kwok", "clusters", cluster, "pki", "ca.crt")
	var out []string
	for _, kv := range []string{
		"requestheader-client-ca-file=" + ca,
		"requestheader-allowed-names=" + kwokAdminUser,
		"requestheader-username-headers=X-Remote-User",
		"requestheader-group-headers=X-Remote-Group",
		"requestheader-extra-headers-prefix=X-Remote-Extra-",
		"enable-aggregator-routing=true",
	} {
		out = append(out, "--extra-args", "kube-apiserver="+kv)
	}
	return out
}

// hostAddress returns this machine's first non-loopback IPv4 address: where
// the hub cluster's kube-apiserver reaches the hub's API proxy.
func hostAddress() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", fmt.Errorf("failed to list this machine's addresses: %w", err)
	}
	for _, a := range addrs {
		ipnet, ok := a.(*net.IPNet)
		if !ok || ipnet.IP.IsLoopback() || ipnet.IP.IsLinkLocalUnicast() {
			continue
		}
		if ip4 := ipnet.IP.To4(); ip4 != nil {
			return ip4.String(), nil
		}
	}
	return "", fmt.Errorf("this machine has no non-loopback IPv4 address for the hub cluster's kube-apiserver to reach the API proxy at")
}

// freeHostAddress returns an address on host with a port nobody listens on now.
func freeHostAddress(host string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("failed to find a free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

var proxyFlagSupport sync.Map // hub binary path -> bool

// hubServesProxy reports whether the hub binary has --proxy-bind-address (a
// hub of an older version, which the skew suite runs, has not).
func hubServesProxy(ctx context.Context, binary string) bool {
	if v, ok := proxyFlagSupport.Load(binary); ok {
		return v.(bool)
	}
	out, _ := run(ctx, nil, binary, "--help")
	ok := strings.Contains(out, "--proxy-bind-address")
	proxyFlagSupport.Store(binary, ok)
	return ok
}

// serveAPIProxy points Service flotilla-hub at the first hub replica's proxy
// address, applies the APIService and waits until kube-apiserver finds it
// available.
func (f *Fleet) serveAPIProxy(ctx context.Context, st *State) error {
	addr := st.HubReplicas[0].ProxyAddress
	if addr == "" {
		fmt.Fprintf(f.opts.Out, "    the hub binary has no API proxy (--proxy-bind-address): skipped\n")
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	hub := f.HubKubeconfig()
	if _, err := kubectl(ctx, hub, "-n", hubNamespace, "patch", "service", "flotilla-hub", "--type", "merge", "-p", `{"spec":{"selector":null}}`); err != nil {
		return err
	}
	// The endpoints Kubernetes made while it had a selector (kwok's fake
	// pods) stay when it loses it: kube-apiserver would pick them at random.
	if _, err := kubectl(ctx, hub, "-n", hubNamespace, "delete", "endpointslices", "--ignore-not-found",
		"-l", "kubernetes.io/service-name=flotilla-hub,endpointslice.kubernetes.io/managed-by!=localfleet.flotilla.io"); err != nil {
		return err
	}
	if _, err := kubectl(ctx, hub, "-n", hubNamespace, "delete", "endpoints", "flotilla-hub", "--ignore-not-found"); err != nil {
		return err
	}
	slice := fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %s
  namespace: %s
  labels:
    kubernetes.io/service-name: flotilla-hub
    endpointslice.kubernetes.io/managed-by: localfleet.flotilla.io
addressType: IPv4
endpoints:
- addresses: [%q]
  conditions: {ready: true}
ports:
- {name: proxy, port: %s, protocol: TCP}
`, proxyEndpointSlice, hubNamespace, host, port)
	file := filepath.Join(f.opts.Dir, "hub-proxy-endpointslice.yaml")
	if err := os.WriteFile(file, []byte(slice), 0o644); err != nil {
		return fmt.Errorf("failed to write %s: %w", file, err)
	}
	if _, err := kubectl(ctx, hub, "apply", "-f", file); err != nil {
		return err
	}
	if _, err := kubectl(ctx, hub, "apply", "-f", filepath.Join(f.opts.RepoRoot, "manifests", "hub", "proxy", "apiservice.yaml")); err != nil {
		return err
	}
	if _, err := kubectl(ctx, hub, "wait", "--for", "condition=Available", "--timeout", "60s", "apiservice/v1beta1.proxy.flotilla.io"); err != nil {
		why, _ := kubectl(ctx, hub, "get", "apiservice", "v1beta1.proxy.flotilla.io", "-o", `jsonpath={.status.conditions[?(@.type=="Available")].message}`)
		return fmt.Errorf("%w: %s", err, why)
	}
	// The plan API shares the proxy's listener (a hub that predates it has
	// no such file in its tree, and none is applied).
	planSvc := filepath.Join(f.opts.RepoRoot, "manifests", "hub", "proxy", "apiservice-plan.yaml")
	if _, err := os.Stat(planSvc); err != nil {
		return nil
	}
	if _, err := kubectl(ctx, hub, "apply", "-f", planSvc); err != nil {
		return err
	}
	if _, err := kubectl(ctx, hub, "wait", "--for", "condition=Available", "--timeout", "60s", "apiservice/v1beta1.plan.flotilla.io"); err != nil {
		why, _ := kubectl(ctx, hub, "get", "apiservice", "v1beta1.plan.flotilla.io", "-o", `jsonpath={.status.conditions[?(@.type=="Available")].message}`)
		return fmt.Errorf("%w: %s", err, why)
	}
	return nil
}
