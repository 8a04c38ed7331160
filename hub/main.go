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

// Command hub is Flotilla's control plane: it runs in one cluster, schedules
// placements onto member clusters and serves the agents' tunnels.
package main

import (
	"fmt"
	"os"
	// Maintenance windows name IANA time zones; images without zoneinfo
	// still know them.
	_ "time/tzdata"

	"github.com/flotilla-io/flotilla/hub/app"
)

func main() {
	if err := app.NewCommand().Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "hub: %v\n", err)
		os.Exit(1)
	}
}
