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

package main

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
)

// NotesFile holds the release notes: the changelog's section of the version.
const NotesFile = "RELEASE_NOTES.md"

// heading matches a version's heading in a Keep a Changelog file:
// "## [v0.3.0] - 2026-11-27", "## [0.3.0]", "## v0.3.0".
var heading = regexp.MustCompile(`^##\s+\[?v?([^\]\s]+)\]?(\s.*)?$`)

// linkDef matches a link reference definition ("[v0.3.0]: https://...").
var linkDef = regexp.MustCompile(`^\[[^\]]+\]:\s`)

// ChangelogSection returns the body of version's section of a Keep a
// Changelog file (without its heading, trimmed): from the line "## [vX.Y.Z]"
// (with or without the brackets, the v and a date after it) to the next "## "
// heading, or the link reference definitions that end the file. It fails,
// saying what to add, when there is no such section or it is empty.
func ChangelogSection(changelog, version string) (string, error) {
	want := strings.TrimPrefix(version, "v")
	var body []string
	in, found := false, false
	sc := bufio.NewScanner(strings.NewReader(changelog))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := heading.FindStringSubmatch(line); m != nil {
			if in {
				break
			}
			if m[1] == want {
				in, found = true, true
			}
			continue
		}
		if in && linkDef.MatchString(line) {
			break
		}
		if in {
			body = append(body, line)
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if !found {
		return "", fmt.Errorf("CHANGELOG.md has no section for %s: add `## [%s] - YYYY-MM-DD` with the release's changes (move them from `## [Unreleased]`)", version, version)
	}
	text := strings.TrimSpace(strings.Join(body, "\n"))
	if text == "" {
		return "", fmt.Errorf("CHANGELOG.md's section for %s is empty: list the release's changes under it", version)
	}
	return text, nil
}

// ReleaseNotes is the content of NotesFile.
func ReleaseNotes(version, section string) string {
	return "# Flotilla " + version + "\n\n" + section + "\n"
}
