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
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// node is a line of a tree and the lines under it.
type node struct {
	text     string
	children []*node
}

func (n *node) add(format string, args ...any) *node {
	c := &node{text: fmt.Sprintf(format, args...)}
	n.children = append(n.children, c)
	return c
}

// print writes the tree: the root's line, then its children with branches.
func (n *node) print(w io.Writer) {
	fmt.Fprintln(w, n.text)
	n.printChildren(w, "")
}

func (n *node) printChildren(w io.Writer, prefix string) {
	for i, c := range n.children {
		branch, indent := "├── ", "│   "
		if i == len(n.children)-1 {
			branch, indent = "└── ", "    "
		}
		lines := strings.Split(c.text, "\n")
		fmt.Fprintln(w, prefix+branch+lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintln(w, prefix+indent+l)
		}
		c.printChildren(w, prefix+indent)
	}
}

// painter colours words when the output is a terminal.
type painter struct {
	on bool
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiFaint  = "\x1b[2m"
	// ansiDefault is the default colour: as long as ansiRed and ansiGreen.
	ansiDefault = "\x1b[39m"
)

func (p painter) paint(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return code + s + ansiReset
}

func (p painter) bold(s string) string  { return p.paint(ansiBold, s) }
func (p painter) faint(s string) string { return p.paint(ansiFaint, s) }
func (p painter) bad(s string) string   { return p.paint(ansiRed, s) }
func (p painter) good(s string) string  { return p.paint(ansiGreen, s) }
func (p painter) warn(s string) string  { return p.paint(ansiYellow, s) }

// status colours a condition status: True green, False red, Unknown yellow.
func (p painter) status(s metav1.ConditionStatus) string {
	switch s {
	case metav1.ConditionTrue:
		return p.good(string(s))
	case metav1.ConditionFalse:
		return p.bad(string(s))
	}
	return p.warn(string(s))
}

// age says how long ago t was, like kubectl's AGE column; "" for a zero time.
func age(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return ""
	}
	return duration.HumanDuration(now.Sub(t.Time)) + " ago"
}

// pad right-pads s to n runes, counting only what is visible.
func pad(s string, n int) string {
	if l := len([]rune(s)); l < n {
		return s + strings.Repeat(" ", n-l)
	}
	return s
}
