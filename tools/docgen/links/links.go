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

// Package links checks the relative links and #anchors of Markdown pages, the way
// GitHub resolves them, without the network.
package links

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// pending lists pages that other changes, written in parallel with the docs tree,
// add. Links to them are accepted while they do not exist; once a page exists it is
// checked like any other. Empty once they are merged.
var Pending = []string{}

var (
	// inlineLink matches [text](target) and ![alt](target), with an optional title.
	inlineLink = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// refDef matches a reference definition: [id]: target
	refDef = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	// codeSpan matches inline code, whose text is never a link.
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	// htmlAnchor matches <a id="x"> and <a name="x">.
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	heading    = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	fence      = regexp.MustCompile("^\\s{0,3}(```+|~~~+)")
)

// docFiles are the pages checked: *.md at the root and everything under docs/.
func docFiles(root string) ([]string, error) {
	var files []string
	top, err := filepath.Glob(filepath.Join(root, "*.md"))
	if err != nil {
		return nil, err
	}
	for _, f := range top {
		rel, _ := filepath.Rel(root, f)
		files = append(files, filepath.ToSlash(rel))
	}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}

// Check returns one line per link that does not resolve: a relative path that
// does not exist, or an #anchor that is not a heading (or <a id>) of its page.
// External links (a scheme, or //host) are not followed: there is no network.
func Check(root string) ([]string, error) {
	files, err := docFiles(root)
	if err != nil {
		return nil, err
	}
	isPending := map[string]bool{}
	for _, p := range Pending {
		isPending[p] = true
	}
	anchors := map[string]map[string]bool{} // by page, read once
	anchorsOf := func(page string) (map[string]bool, error) {
		if a, ok := anchors[page]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			return nil, err
		}
		a := pageAnchors(string(b))
		anchors[page] = a
		return a, nil
	}
	var problems []string
	for _, file := range files {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return nil, err
		}
		for _, l := range extractLinks(string(b)) {
			target, frag, ok := resolve(file, l.target)
			if !ok {
				continue
			}
			where := fmt.Sprintf("%s:%d: %s", file, l.line, l.target)
			if target != file {
				info, err := os.Stat(filepath.Join(root, target))
				if err != nil {
					if !isPending[target] {
						problems = append(problems, where+": no such file")
					}
					continue
				}
				if info.IsDir() {
					if frag != "" {
						problems = append(problems, where+": an anchor on a directory")
					}
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				continue // a line anchor into source (#L10) is not checked
			}
			a, err := anchorsOf(target)
			if err != nil {
				return nil, err
			}
			if !a[frag] {
				problems = append(problems, where+": no heading #"+frag+" in "+target)
			}
		}
	}
	return problems, nil
}

type link struct {
	target string
	line   int
}

// extractLinks finds the link targets of a Markdown page, outside code blocks and code spans.
func extractLinks(md string) []link {
	var out []link
	for _, pl := range proseLines(md) {
		line := codeSpan.ReplaceAllString(pl.text, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{m[1], pl.number})
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			out = append(out, link{m[1], pl.number})
		}
	}
	return out
}

// proseLine is a line of a Markdown page outside its fenced code blocks, with
// its number (from 1).
type proseLine struct {
	number int
	text   string
}

// proseLines returns the lines of a Markdown page that are outside fenced code
// blocks (the fence lines left out too).
func proseLines(md string) []proseLine {
	var out []proseLine
	inFence := ""
	for i, line := range strings.Split(md, "\n") {
		if m := fence.FindStringSubmatch(line); m != nil {
			marker := m[1][:3]
			switch {
			case inFence == "":
				inFence = marker
			case inFence == marker:
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		out = append(out, proseLine{number: i + 1, text: line})
	}
	return out
}

// resolve turns a link on page from into a repository path and fragment; ok is false
// for links that are not checked (external ones).
func resolve(from, target string) (page, frag string, ok bool) {
	if target == "" {
		return "", "", false
	}
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(target, "//") {
		return "", "", false
	}
	frag = u.Fragment
	p := u.Path
	switch {
	case p == "":
		return from, frag, true
	case strings.HasPrefix(p, "/"):
		page = path.Clean(strings.TrimPrefix(p, "/"))
	default:
		page = path.Clean(path.Join(path.Dir(from), p))
	}
	return page, frag, true
}

// pageAnchors returns the anchors GitHub gives a page's headings (and its <a id>s).
func pageAnchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, pl := range proseLines(md) {
		line := pl.text
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := AnchorOf(m[2])
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

var (
	mdLinkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
)

// AnchorOf is GitHub's anchor for a heading's text: the rendered text in lower
// case, without punctuation other than - and _, spaces turned into -.
func AnchorOf(text string) string {
	text = mdLinkText.ReplaceAllString(text, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
