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
	"fmt"
	"strconv"
	"strings"
)

// Semantic is a parsed vMAJOR.MINOR.PATCH[-PRERELEASE][+BUILD] version.
type Semantic struct {
	Major, Minor, Patch int
	// Prerelease is what follows the first '-' (a git describe suffix such as
	// "3-gabc1234" or "rc.1"), without the build metadata.
	Prerelease string
}

// String formats the version as vMAJOR.MINOR.PATCH[-PRERELEASE].
func (v Semantic) String() string {
	s := fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch)
	if v.Prerelease != "" {
		s += "-" + v.Prerelease
	}
	return s
}

// Parse reads a semantic version with a leading "v", as git tags name
// releases ("v0.3.1") and `git describe --tags` describes builds after one
// ("v0.3.1-4-gabc1234", "v0.3.1-dirty"). It reports false for anything else:
// a bare commit hash (a describe without a tag), "fleetsim", "".
func Parse(s string) (Semantic, bool) {
	rest, ok := strings.CutPrefix(s, "v")
	if !ok {
		return Semantic{}, false
	}
	rest, _, _ = strings.Cut(rest, "+")
	core, pre, _ := strings.Cut(rest, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return Semantic{}, false
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || p == "" || (len(p) > 1 && p[0] == '0') {
			return Semantic{}, false
		}
		n[i] = v
	}
	return Semantic{Major: n[0], Minor: n[1], Patch: n[2], Prerelease: pre}, true
}

// MaxMinorSkew is how many minor versions a hub and an agent of the same major
// version may be apart (VERSIONING.md): a hub of minor N works with agents of
// N-1, N and N+1.
const MaxMinorSkew = 1

// Skew is the verdict of CheckSkew.
type Skew struct {
	// Compatible is false when the two builds must not talk to each other.
	Compatible bool
	// Message is one line for the log: why they are incompatible, or, for a
	// compatible pair that could not be checked (a development build, a peer
	// that announced no version), why not. Empty for a checked, supported
	// pair.
	Message string
}

// CheckSkew decides whether this build (local, of role localRole, e.g. "hub")
// may work with a peer build (peer, of role peerRole, e.g. "agent"). The rules
// (VERSIONING.md, "Which hub and agent versions work together"):
//
//   - A peer that announced no version predates version announcements: it is
//     not checked (compatible, with a note).
//   - A build whose version is not vMAJOR.MINOR.PATCH (a git describe without
//     a tag, "fleetsim") or is v0.0.0 with any suffix (v0.0.0-dev, the default
//     of an unstamped build) is a development build: compatible with
//     anything, with a note. This holds for either side.
//   - Different major versions are incompatible.
//   - Within one major version, minor versions at most MaxMinorSkew apart are
//     compatible; further apart they are not. Patch versions and prerelease
//     suffixes never matter.
//
// The rule is symmetric, so the hub and the agent reach the same verdict.
func CheckSkew(local, localRole, peer, peerRole string) Skew {
	if peer == "" {
		return Skew{Compatible: true, Message: fmt.Sprintf("the %s announces no version (it predates version announcements); not checking the version skew", peerRole)}
	}
	lv, lok := release(local)
	pv, pok := release(peer)
	switch {
	case !lok:
		return Skew{Compatible: true, Message: fmt.Sprintf("this %s is a development build (%s); not checking the version skew with %s %s", localRole, local, peerRole, peer)}
	case !pok:
		return Skew{Compatible: true, Message: fmt.Sprintf("the %s is a development build (%s); not checking the version skew with %s %s", peerRole, peer, localRole, local)}
	}
	diff := pv.Minor - lv.Minor
	if pv.Major == lv.Major && diff <= MaxMinorSkew && diff >= -MaxMinorSkew {
		return Skew{Compatible: true}
	}
	return Skew{Message: incompatible(localRole, lv, peerRole, pv)}
}

// incompatible is the one-line refusal: which builds, the supported range and
// what to upgrade.
func incompatible(localRole string, lv Semantic, peerRole string, pv Semantic) string {
	hub, agent := lv, pv
	if localRole != "hub" {
		hub, agent = pv, lv
	}
	var fix string
	switch {
	case agent.Major < hub.Major || (agent.Major == hub.Major && agent.Minor < hub.Minor):
		fix = "upgrade the agent (one minor version at a time, the hub first)"
	default:
		fix = "upgrade the hub first, then the agent"
	}
	lo := max(lv.Minor-MaxMinorSkew, 0)
	return fmt.Sprintf("version skew not supported: %s %s and %s %s are more than %d minor version apart (this %s works with %ss v%d.%d to v%d.%d); %s",
		peerRole, pv, localRole, lv, MaxMinorSkew, localRole, peerRole, lv.Major, lo, lv.Major, lv.Minor+MaxMinorSkew, fix)
}

// release parses v as a released (or tag-described) version; development
// builds report false.
func release(v string) (Semantic, bool) {
	s, ok := Parse(v)
	if !ok || (s.Major == 0 && s.Minor == 0 && s.Patch == 0) {
		return Semantic{}, false
	}
	return s, true
}
