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

package links

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAnchorOfIsGitHubs(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"Install the hub", "install-the-hub"},
		{"kubectl flotilla: why is it (not) there?", "kubectl-flotilla-why-is-it-not-there"},
		{"`make images`: the hub and agent images", "make-images-the-hub-and-agent-images"},
		{"ResourcePlacement: placements for a namespace team", "resourceplacement-placements-for-a-namespace-team"},
		{"A [linked](x.md) heading", "a-linked-heading"},
		{"flotilla_tunnel_sessions", "flotilla_tunnel_sessions"},
		{"Scale — 10 000 members", "scale--10-000-members"},
	} {
		if got := AnchorOf(tc.heading); got != tc.want {
			t.Errorf("AnchorOf(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

func TestPageAnchorsNumbersDuplicatesAndSkipsCode(t *testing.T) {
	md := "# Title\n## Flags\n```\n# not a heading\n```\n## Flags\n<a id=\"custom\"></a>\n"
	want := map[string]bool{"title": true, "flags": true, "flags-1": true, "custom": true}
	if diff := cmp.Diff(want, pageAnchors(md)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestExtractLinksIgnoresCode(t *testing.T) {
	md := "See [a](a.md#x) and `[b](b.md)`.\n```\n[c](c.md)\n```\n![img](i.png \"t\")\n[ref]: r.md\n"
	want := []link{{"a.md#x", 1}, {"i.png", 5}, {"r.md", 6}}
	if diff := cmp.Diff(want, extractLinks(md), cmp.AllowUnexported(link{})); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestCheckLinksReportsMissingPagesAndAnchorsButNotPendingOrExternal(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "[ok](docs/a.md#section) [bad](docs/missing.md) [pending](VERSIONING.md) [web](https://example.com/x.md) [self](#top)\n# Top\n")
	write("docs/a.md", "## Section\n[up](../README.md#nope) [dir](../docs/) [src](../main.go#L3)\n")
	write("main.go", "package links\n")
	defer func(old []string) { Pending = old }(Pending)
	Pending = []string{"VERSIONING.md"}
	got, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:1: docs/missing.md: no such file",
		"docs/a.md:2: ../README.md#nope: no heading #nope in README.md",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
