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

package version

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	cases := map[string]struct {
		in   string
		want Semantic
		ok   bool
	}{
		"a release tag":                       {"v0.3.1", Semantic{0, 3, 1, ""}, true},
		"a describe after a tag":              {"v1.2.0-4-gabc1234", Semantic{1, 2, 0, "4-gabc1234"}, true},
		"a dirty describe after a tag":        {"v1.2.0-4-gabc1234-dirty", Semantic{1, 2, 0, "4-gabc1234-dirty"}, true},
		"build metadata is dropped":           {"v1.2.3+meta", Semantic{1, 2, 3, ""}, true},
		"the default of an unstamped build":   {"v0.0.0-dev", Semantic{0, 0, 0, "dev"}, true},
		"a bare commit hash is not a version": {"428e200", Semantic{}, false},
		"a dirty bare hash is not a version":  {"428e200-dirty", Semantic{}, false},
		"no leading v is not a version":       {"1.2.3", Semantic{}, false},
		"two parts are not a version":         {"v1.2", Semantic{}, false},
		"a leading zero is not a version":     {"v1.02.3", Semantic{}, false},
		"a name is not a version":             {"fleetsim", Semantic{}, false},
		"empty is not a version":              {"", Semantic{}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := Parse(tc.in)
			if ok != tc.ok {
				t.Fatalf("Parse(%q) ok = %v, want %v", tc.in, ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestCheckSkew(t *testing.T) {
	cases := map[string]struct {
		hub, agent string
		compatible bool
		// note is whether a compatible verdict carries a message.
		note bool
		// says is a part of the message.
		says string
	}{
		"the same version is compatible":                {"v0.3.0", "v0.3.0", true, false, ""},
		"patch versions never matter":                   {"v0.3.0", "v0.3.9", true, false, ""},
		"an agent one minor older is compatible":        {"v0.3.0", "v0.2.5", true, false, ""},
		"an agent one minor newer is compatible":        {"v0.3.0", "v0.4.0", true, false, ""},
		"tag-described builds count as their tag":       {"v0.3.0-5-gabc1234", "v0.4.0-1-gdef5678-dirty", true, false, ""},
		"an agent two minors older is refused":          {"v0.3.0", "v0.1.0", false, false, "upgrade the agent"},
		"an agent two minors newer is refused":          {"v0.3.0", "v0.5.0", false, false, "upgrade the hub first"},
		"another major version is refused":              {"v1.0.0", "v0.9.0", false, false, "upgrade the agent"},
		"a development hub is compatible with a note":   {"v0.0.0-dev", "v0.9.0", true, true, "development build"},
		"a development agent is compatible with a note": {"v0.3.0", "v0.0.0-dev", true, true, "development build"},
		"an untagged describe is a development build":   {"v0.3.0", "428e200-dirty", true, true, "development build"},
		"an agent announcing no version is not checked": {"v0.3.0", "", true, true, "announces no version"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			verdicts := []Skew{CheckSkew(tc.hub, "hub", tc.agent, "agent")}
			if tc.agent != "" { // an agent always knows its own version
				verdicts = append(verdicts, CheckSkew(tc.agent, "agent", tc.hub, "hub"))
			}
			for _, got := range verdicts {
				if got.Compatible != tc.compatible {
					t.Fatalf("Compatible = %v, want %v (%q)", got.Compatible, tc.compatible, got.Message)
				}
				if (got.Message != "") != (tc.note || !tc.compatible) {
					t.Errorf("Message = %q, want a message: %v", got.Message, tc.note || !tc.compatible)
				}
				if !strings.Contains(got.Message, tc.says) {
					t.Errorf("Message = %q, want it to say %q", got.Message, tc.says)
				}
				if strings.Contains(got.Message, "\n") {
					t.Errorf("Message = %q, want one line", got.Message)
				}
			}
		})
	}
}

func TestCheckSkewMessage(t *testing.T) {
	got := CheckSkew("v0.3.0", "hub", "v0.5.1", "agent").Message
	want := "version skew not supported: agent v0.5.1 and hub v0.3.0 are more than 1 minor version apart (this hub works with agents v0.2 to v0.4); upgrade the hub first, then the agent"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStringNamesTheCommitAndDateWhenKnown(t *testing.T) {
	defer func(v, c, d string) { Version, Commit, Date = v, c, d }(Version, Commit, Date)
	Version, Commit, Date = "v0.3.0", "", ""
	if got := String("hub"); !strings.HasPrefix(got, "hub v0.3.0 (go") {
		t.Errorf("String = %q, want the version then the Go version when commit and date are unknown", got)
	}
	Commit, Date = "2344da0", "2026-11-26T23:10:00Z"
	if got := String("agent"); !strings.HasPrefix(got, "agent v0.3.0 (commit 2344da0, 2026-11-26T23:10:00Z, go") {
		t.Errorf("String = %q, want the version, commit and date", got)
	}
}
