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

package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/pkg/eventnote"
	"github.com/flotilla-io/flotilla/pkg/testenv"
)

// An Event whose note is longer than the API server accepts (a rollout waiting
// for hundreds of clusters, each named) is recorded cut, not rejected and lost.
func TestALongEventNoteIsRecordedCut(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "long-note", Namespace: "default"}}
	testenv.Create(t, c, cm)
	var rec events.EventRecorder
	env.StartManager(t, func(mgr ctrl.Manager) error {
		rec = eventRecorder(mgr, "long-note-test")
		return nil
	})
	clusters := make([]string, 700)
	for i := range clusters {
		clusters[i] = fmt.Sprintf("member-%04d", i)
	}
	long := "RolloutStarted is False: 700 of 700 clusters wait: " + strings.Join(clusters, ", ")
	rec.Eventf(cm, nil, corev1.EventTypeWarning, "RolloutNotStartedYet", "RolloutStarted", "%s", long)
	testenv.Eventually(t, 30*time.Second, func() error {
		list := &eventsv1.EventList{}
		if err := c.List(ctx, list); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Regarding.Name != cm.Name || e.Reason != "RolloutNotStartedYet" {
				continue
			}
			if len(e.Note) > eventnote.MaxLength || !strings.HasPrefix(e.Note, "RolloutStarted is False: 700 of 700 clusters wait: member-0000, ") ||
				!strings.HasSuffix(e.Note, " bytes)") {
				return fmt.Errorf("the Event's note is %d bytes and reads %q…%q", len(e.Note), e.Note[:60], e.Note[len(e.Note)-30:])
			}
			return nil
		}
		return fmt.Errorf("no Event on ConfigMap %s (a note of %d bytes)", cm.Name, len(long))
	})
}
