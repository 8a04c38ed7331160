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

package readiness

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/pkg/conditions"
)

// UpdateRun decides a ClusterStagedUpdateRun's verdict from its Initialized,
// Progressing and Succeeded conditions. The first rule that holds decides:
//
//  1. Succeeded is True: Ready.
//  2. Succeeded is False: stalled (the run failed; a new run is needed).
//  3. Initialized is missing: Unknown, reconciling.
//  4. Initialized is False because the strategy cannot be used or the
//     placement is not External: stalled, until the strategy or the
//     placement is changed. For any other reason (the placement, strategy or
//     snapshot does not exist yet, another run goes first): reconciling, as the
//     run starts by itself once what it waits for appears.
//  5. Progressing is False because spec.state is Stop: Ready, since the run is
//     where its spec asks (it moves no further cluster).
//  6. Progressing decides, reconciling: True while clusters update, False
//     while the run waits for an approval or a TimedWait.
//  7. Progressing is missing: Unknown, reconciling.
func UpdateRun(run *placementv1beta1.ClusterStagedUpdateRun) Verdict {
	conds := run.Status.Conditions
	if c := conditions.Get(conds, placementv1beta1.ConditionUpdateRunSucceeded); c != nil {
		switch c.Status {
		case metav1.ConditionTrue:
			return ready(c)
		case metav1.ConditionFalse:
			return from(c, true)
		}
	}
	init := conditions.Get(conds, placementv1beta1.ConditionUpdateRunInitialized)
	switch {
	case init == nil:
		return Verdict{Ready: metav1.ConditionUnknown, Reason: placementv1beta1.ReasonUpdateRunProgressing, Message: "the run has not been initialized yet"}
	case init.Status == metav1.ConditionFalse:
		stalled := init.Reason == placementv1beta1.ReasonUpdateRunInvalidStrategy || init.Reason == placementv1beta1.ReasonUpdateRunPlacementNotExternal
		return from(init, stalled)
	}
	prog := conditions.Get(conds, placementv1beta1.ConditionUpdateRunProgressing)
	switch {
	case prog == nil:
		return Verdict{Ready: metav1.ConditionUnknown, Reason: placementv1beta1.ReasonUpdateRunProgressing, Message: "the run has not started its first stage yet"}
	case prog.Status == metav1.ConditionFalse && prog.Reason == placementv1beta1.ReasonUpdateRunStopped:
		return ready(prog)
	case prog.Status == metav1.ConditionTrue:
		// Progressing True is the run on its way, not a run that arrived.
		v := from(prog, false)
		v.Ready = metav1.ConditionFalse
		return v
	}
	return from(prog, false)
}
