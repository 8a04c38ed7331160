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

package testenv

import (
	"fmt"
	"os"
	"testing"
)

// Run is the body of a package's TestMain: it starts a test API server, calls
// setup (which may be nil) with it, runs the tests and stops the server,
// returning the exit code. A start or setup failure is printed and fails the run.
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.Run(m, testenv.Options{}, func(e *testenv.Env) error { env = e; return nil }))
//	}
func Run(m *testing.M, opts Options, setup func(*Env) error) int {
	if opts.MemberCluster {
		// A member cluster starts with the built-in kinds only.
		dir, err := os.MkdirTemp("", "testenv-no-crds")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		opts.CRDDirectory = dir
	}
	env, err := Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if setup != nil {
		if err := setup(env); err != nil {
			fmt.Fprintf(os.Stderr, "test setup failed: %v\n", err)
			return 1
		}
	}
	return m.Run()
}
