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

package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/agent/apply"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

// report sends a Work's last status to the hub, if there is a session and
// the status differs from the one last reported in it (or force is set).
// Only the status of the spec the hub last sent is reported.
func (r *Runner) report(name string, force bool) {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()

	r.mu.Lock()
	st, s := r.works[name], r.current
	if st == nil || s == nil || st.status == nil || st.work == nil || st.appliedHash != st.hash {
		r.mu.Unlock()
		return
	}
	status, hash, sent := *st.status, st.appliedHash, st.sent
	r.mu.Unlock()

	key := statusKey(hash, status)
	if !force && key == sent {
		return
	}
	data, err := json.Marshal(status)
	if err != nil {
		r.log.Error(err, "Failed to encode the Work's status", "work", name)
		return
	}
	if err := s.Status().Send(tunnel.StatusReport{WorkName: name, Hash: hash, Status: data}); err != nil {
		// The session is gone (or the report too large); the next session
		// reports every Work again.
		r.log.V(1).Info("Failed to report the Work's status", "work", name, "err", err)
		return
	}
	r.opts.Metrics.statusReportSent()
	r.log.V(1).Info("Reported the Work's status", "work", name, "hash", hash,
		"applied", conditionStatus(status.Conditions, placementv1beta1.ConditionApplied),
		"available", conditionStatus(status.Conditions, placementv1beta1.ConditionAvailable))

	r.mu.Lock()
	if r.works[name] == st && r.current == s {
		st.sent = key
	}
	r.mu.Unlock()
}

// confirmRemoved tells the hub that a deleted Work's objects are gone from the
// member, so that the hub lets the Work go. Without a session nothing is sent:
// the hub asks again (WorkDelete) when the agent reconnects.
func (r *Runner) confirmRemoved(name string, released []apply.Released) {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	r.mu.Lock()
	s := r.current
	r.mu.Unlock()
	if s == nil {
		return
	}
	rep := tunnel.StatusReport{WorkName: name, Removed: true}
	for i, rel := range released {
		if i == tunnel.MaxReleased {
			rep.Released = append(rep.Released, fmt.Sprintf("and %d more", len(released)-i))
			break
		}
		rep.Released = append(rep.Released, rel.String())
	}
	if err := s.Status().Send(rep); err != nil {
		r.log.V(1).Info("Failed to confirm the Work's removal", "work", name, "err", err)
		return
	}
	r.opts.Metrics.statusReportSent()
}

// reportAll reports the status of every Work, after the hub's WorkSyncDone:
// the hub may have missed reports while the agent was disconnected.
func (r *Runner) reportAll() {
	r.mu.Lock()
	names := make([]string, 0, len(r.works))
	for name, st := range r.works {
		if st.status != nil {
			names = append(names, name)
		}
	}
	r.mu.Unlock()
	sort.Strings(names)
	for _, name := range names {
		r.report(name, true)
	}
}

// statusKey identifies a status for deciding whether it changed: transition
// times alone do not make a change.
func statusKey(hash string, status placementv1beta1.WorkStatus) string {
	s := *status.DeepCopy()
	clearTimes(s.Conditions)
	for i := range s.ManifestConditions {
		clearTimes(s.ManifestConditions[i].Conditions)
	}
	data, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	return hash + "/" + string(data)
}

func clearTimes(conditions []metav1.Condition) {
	for i := range conditions {
		conditions[i].LastTransitionTime = metav1.Time{}
	}
}

func conditionStatus(conditions []metav1.Condition, t string) metav1.ConditionStatus {
	for _, c := range conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return metav1.ConditionUnknown
}

func conditionTrue(conditions []metav1.Condition, t string) bool {
	return conditionStatus(conditions, t) == metav1.ConditionTrue
}

// SendUpsync sends an upsync message to the hub in the current session. It fails
// when there is none: the next session sends everything again (Upsyncer.Resync).
func (r *Runner) SendUpsync(m tunnel.Upsync) error {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	r.mu.Lock()
	s := r.current
	r.mu.Unlock()
	if s == nil {
		return errNoSession
	}
	return s.Status().Send(m)
}

// errNoSession is SendUpsync's error without a session.
var errNoSession = errors.New("not connected to the hub")
