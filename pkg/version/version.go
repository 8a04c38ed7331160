// Package version holds the build version of the hub and agent binaries.
package version

import (
	"fmt"
	"runtime"
)

// Version is set at link time with -ldflags "-X .../pkg/version.Version=...".
var Version = "v0.0.0-dev"

// String describes the build for `hub version` and `agent version`.
func String(binary string) string {
	return fmt.Sprintf("%s %s (%s, %s/%s)", binary, Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
