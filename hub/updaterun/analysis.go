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

package updaterun

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	placementv1beta1 "github.com/flotilla-io/flotilla/apis/placement/v1beta1"
	"github.com/flotilla-io/flotilla/hub/analysis"
)

// An Analysis task judges the clusters its stage just updated, with the
// evaluation of hub/analysis: a round every interval, passed after
// successCount passing rounds in a row, failed after failureLimit failing
// rounds in all. The task's status keeps the counts (analysisTask, execute.go).

// validateAnalyses compiles the checks of every Analysis task of a strategy, and
// says (for the user) what is wrong with the first check that does not compile.
func validateAnalyses(spec *placementv1beta1.StagedUpdateStrategySpec) error {
	for _, st := range spec.Stages {
		for _, t := range st.AfterStageTasks {
			if t.Type != placementv1beta1.AfterStageTaskTypeAnalysis {
				continue
			}
			if t.Analysis == nil {
				return fmt.Errorf("stage %s: the Analysis task has no analysis", st.Name)
			}
			if _, err := analysis.Compile(t.Analysis.Checks); err != nil {
				return fmt.Errorf("stage %s: %w", st.Name, err)
			}
		}
	}
	return nil
}

// retryRequested decides whether a failed analysis runs again, and returns the
// token to record for it. The rule: only an analysis that paused the run
// (onFailure Pause; a rollback has already moved the clusters back and ended
// the run) runs again, and only when the run's retry-analysis annotation is
// set to a value other than the one that last restarted it. The value is
// recorded as a hash, so any value fits the status.
func retryRequested(annotation string, st *placementv1beta1.AnalysisStatus, rollback bool) (string, bool) {
	if annotation == "" || rollback {
		return "", false
	}
	sum := sha256.Sum256([]byte(annotation))
	token := hex.EncodeToString(sum[:8])
	if st != nil && st.Retried == token {
		return "", false
	}
	return token, true
}
