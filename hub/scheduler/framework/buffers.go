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

package framework

// buffers are a cycle's arrays of one entry per cluster: the CycleState's
// ClusterInfos, their pointers and selection marks, and the cycle's records.
// A framework keeps the buffers of finished cycles (Framework.buffers) and
// hands them to the next ones, so that a cycle over a fleet of the same size
// allocates none of them. Nothing a cycle returns points into them: decisions
// and the condition copy names and reasons out, and lazily explained
// rejections (NewStatusFor) are formatted before the cycle ends.
type buffers struct {
	infos    []ClusterInfo
	clusters []*ClusterInfo
	selected []bool
	recs     []record
}

// take returns buffers for n clusters: the arrays hold zero values.
func (b *buffers) take(n int) {
	if cap(b.infos) < n {
		b.infos = make([]ClusterInfo, n)
		b.clusters = make([]*ClusterInfo, n)
		b.selected = make([]bool, n)
		b.recs = make([]record, n)
		return
	}
	b.infos, b.clusters, b.selected, b.recs = b.infos[:n], b.clusters[:n], b.selected[:n], b.recs[:n]
}

// reset zeroes the arrays, so that pooled buffers keep no member cluster,
// status or reason of a finished cycle alive, and the next cycle starts from
// zero values.
func (b *buffers) reset() {
	clear(b.infos)
	clear(b.clusters)
	clear(b.selected)
	clear(b.recs)
}

// getBuffers returns buffers for a cycle over n clusters.
func (f *Framework) getBuffers(n int) *buffers {
	b, _ := f.buffers.Get().(*buffers)
	if b == nil {
		b = &buffers{}
	}
	b.take(n)
	return b
}

// putBuffers keeps a finished cycle's buffers for the next cycles.
func (f *Framework) putBuffers(b *buffers) {
	b.reset()
	f.buffers.Put(b)
}
