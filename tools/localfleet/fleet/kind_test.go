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
	"path/filepath"
	"strings"
	"testing"
)

func TestKindNamesBelongToTheFleetsFolder(t *testing.T) {
	a := &Fleet{opts: Options{Dir: "/work/a/.localfleet"}}
	b := &Fleet{opts: Options{Dir: "/work/b/.localfleet"}}
	if a.kindPrefix() == b.kindPrefix() {
		t.Fatalf("fleets in different folders share the prefix %s", a.kindPrefix())
	}
	if !strings.HasPrefix(a.kindPrefix(), "flotilla-") || a.kindPrefix() != (&Fleet{opts: Options{Dir: "/work/a/.localfleet"}}).kindPrefix() {
		t.Errorf("prefix %q is not a stable flotilla- name", a.kindPrefix())
	}
	for cluster, want := range map[string]string{
		a.kindPrefix() + "hub":      filepath.Join("/work/a/.localfleet", "hub.kubeconfig"),
		a.kindPrefix() + "member-2": filepath.Join("/work/a/.localfleet", "member-2.kubeconfig"),
	} {
		if got := a.kindKubeconfig(cluster); got != want {
			t.Errorf("kubeconfig of %s = %s, want %s", cluster, got, want)
		}
	}
	if got := a.KindNode("member-1"); got != a.kindPrefix()+"member-1-control-plane" {
		t.Errorf("KindNode = %s", got)
	}
}

func TestNewRefusesAnUnknownProvider(t *testing.T) {
	if _, err := New(Options{Dir: t.TempDir(), RepoRoot: t.TempDir(), Provider: "docker"}); err == nil || !strings.Contains(err.Error(), "want kwok or kind") {
		t.Fatalf("err = %v", err)
	}
	f, err := New(Options{Dir: t.TempDir(), RepoRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if f.opts.Provider != ProviderKwok {
		t.Errorf("default provider = %q, want kwok", f.opts.Provider)
	}
}
