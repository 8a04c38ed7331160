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

package tunnelserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1beta1 "github.com/flotilla-io/flotilla/apis/cluster/v1beta1"
	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/eventnote"
)

// notes records the formatted note of every Event.
type notes struct{ got []string }

func (n *notes) Eventf(_ runtime.Object, _ runtime.Object, _, _, _, note string, args ...interface{}) {
	n.got = append(n.got, fmt.Sprintf(note, args...))
}

// A member that kept objects with long multi-byte names is reported with a
// note the API server accepts: at most eventnote.MaxLength bytes, cut between
// characters.
func TestAReleasedNoteIsCutBetweenCharacters(t *testing.T) {
	ctx := context.Background()
	w := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: clusterv1beta1.HubNamespace, Name: "released-note"}}
	if err := env.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	// "é" is two bytes. Two members whose names differ in length by one
	// put a byte cut inside a character for one of them.
	for _, member := range []string{"member-1", "member-12"} {
		rec := &notes{}
		s := &Server{direct: env.Client, recorder: rec}
		s.reportReleased(ctx, member, w.Namespace, w.Name, []string{"ConfigMap/ns/" + strings.Repeat("é", 2000)})
		if len(rec.got) != 1 {
			t.Fatalf("%s: got %d Events, want 1 (the Work's; it names no placement)", member, len(rec.got))
		}
		note := rec.got[0]
		if len(note) > eventnote.MaxLength {
			t.Errorf("%s: note is %d bytes, the API server accepts %d", member, len(note), eventnote.MaxLength)
		}
		if !utf8.ValidString(note) {
			t.Errorf("%s: note was cut inside a character: %q", member, note[len(note)-20:])
		}
		if want := "member " + member + " kept ConfigMap/ns/éé"; !strings.HasPrefix(note, want) {
			t.Errorf("%s: note does not start with %q", member, want)
		}
	}
}
