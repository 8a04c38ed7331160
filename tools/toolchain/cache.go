package toolchain

// CacheDir is the versioned tool cache `make tools` builds into:
// $XDG_CACHE_HOME/flotilla/bin, or ~/.cache/flotilla/bin.
func CacheDir() (string, error) { return cacheDir() }

// RequiredVersion reads the version of module from the require lines of a go.mod.
func RequiredVersion(gomod, module string) (string, error) { return requiredVersion(gomod, module) }
