package tunnelserver

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
	"github.com/flotilla-io/flotilla/pkg/tunnel"
)

func TestAWorkTooLargeForTheAgentSaysSoAndWhatToChange(t *testing.T) {
	st := placementv1beta1.WorkStatus{}
	sendErr := fmt.Errorf("%w: WorkUpsert payload of 20971520 bytes exceeds the limit of 16777216", tunnel.ErrFrameTooLarge)
	tooLargeStatus(&st, 4, 20971520, sendErr)
	applied := conditions.Get(st.Conditions, placementv1beta1.ConditionApplied)
	if applied == nil || applied.Status != metav1.ConditionFalse || applied.Reason != placementv1beta1.ReasonWorkTooLarge || applied.ObservedGeneration != 4 {
		t.Fatalf("Applied = %+v, want False WorkTooLarge for generation 4", applied)
	}
	for _, want := range []string{"20971520 bytes", "16777216", "select fewer or smaller resources"} {
		if !strings.Contains(applied.Message, want) {
			t.Errorf("Applied's message %q does not say %q", applied.Message, want)
		}
	}
	if c := conditions.Get(st.Conditions, placementv1beta1.ConditionAvailable); c == nil || c.Status != metav1.ConditionUnknown {
		t.Errorf("Available = %+v, want Unknown", c)
	}
}
