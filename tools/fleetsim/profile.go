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
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// steadyProfile is the hub at the end of the steady window (with
// --profile-dir): its resident set, Go's heap in use and the goroutines, in
// all and a member.
type steadyProfile struct {
	RSSBytes       int64   `json:"rssBytes"`
	HeapInuseBytes int64   `json:"heapInuseBytes"`
	StackInuse     int64   `json:"stackInuseBytes"`
	Goroutines     int64   `json:"goroutines"`
	RSSPerMember   float64 `json:"rssBytesPerMember"`
	GoroutinesPer  float64 `json:"goroutinesPerMember"`
	Dir            string  `json:"dir"`
}

// profileFiles are what takeProfiles saves, in order: the heap after a
// collection (for go tool pprof), then as text with Go's memory statistics,
// and the goroutines (grouped by stack).
var profileFiles = []struct{ name, path string }{
	{"heap.pb.gz", "/debug/pprof/heap?gc=1"},
	{"heap.txt", "/debug/pprof/heap?debug=1"},
	{"goroutines.txt", "/debug/pprof/goroutine?debug=1"},
}

// takeProfiles saves the hub's heap and goroutine profiles into dir (from its
// pprof address) and returns the figures of steadyProfile.
func (h *hubProcess) takeProfiles(ctx context.Context, dir string, members int) (*steadyProfile, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, f := range profileFiles {
		if err := fetchTo(ctx, "http://"+h.pprof+f.path, filepath.Join(dir, f.name)); err != nil {
			return nil, err
		}
	}
	p := &steadyProfile{Dir: dir}
	h.mu.Lock()
	cmd := h.cmd
	h.mu.Unlock()
	if cmd != nil {
		p.RSSBytes, _, _ = procStats(cmd.Process.Pid)
	}
	heap, err := os.Open(filepath.Join(dir, "heap.txt"))
	if err != nil {
		return nil, err
	}
	defer heap.Close()
	sc := bufio.NewScanner(heap)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		for prefix, v := range map[string]*int64{"# HeapInuse = ": &p.HeapInuseBytes, "# Stack = ": &p.StackInuse} {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				*v, _ = strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			}
		}
	}
	g, err := os.Open(filepath.Join(dir, "goroutines.txt"))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	first, _ := bufio.NewReader(g).ReadString('\n')
	// "goroutine profile: total 8862"
	if i := strings.LastIndexByte(strings.TrimSpace(first), ' '); i >= 0 {
		p.Goroutines, _ = strconv.ParseInt(strings.TrimSpace(first)[i+1:], 10, 64)
	}
	p.RSSPerMember = float64(p.RSSBytes) / float64(members)
	p.GoroutinesPer = round(float64(p.Goroutines) / float64(members))
	return p, nil
}

func fetchTo(ctx context.Context, url, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("failed to read the hub's profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the hub's %s answered %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
