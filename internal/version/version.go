// Package version reports which build of graphcd is running.
//
// Release builds stamp Version and Commit with
//
//	go build -ldflags "-X github.com/graphcd/graphcd/internal/version.Version=v0.1.0 \
//	  -X github.com/graphcd/graphcd/internal/version.Commit=$(git rev-parse HEAD)"
//
// Unstamped builds fall back to the module and VCS information the Go
// toolchain embeds (runtime/debug.ReadBuildInfo).
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is the release version, set at link time. "dev" marks an unstamped build.
var Version = "dev"

// Commit is the VCS revision the binary was built from, set at link time.
var Commit = ""

// Info describes one build of graphcd.
type Info struct {
	// Version is the release version, or "dev".
	Version string
	// Commit is the VCS revision, or "unknown".
	Commit string
	// GoVersion is the Go toolchain that built the binary, e.g. "go1.26.8".
	GoVersion string
}

// Get returns the build information of the running binary.
func Get() Info {
	info := Info{Version: Version, Commit: Commit, GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		fillFromBuildInfo(&info, bi)
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	return info
}

// fillFromBuildInfo fills what the linker flags left unset from the build
// information the Go toolchain embeds.
func fillFromBuildInfo(info *Info, bi *debug.BuildInfo) {
	if info.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	if info.Commit != "" {
		return
	}
	var revision, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision == "" {
		return
	}
	info.Commit = revision
	if modified == "true" {
		info.Commit += "-dirty"
	}
}

// String formats the build information for people, e.g.
// "graphcd dev (commit abc123, go1.26.8)".
func (i Info) String() string {
	return fmt.Sprintf("graphcd %s (commit %s, %s)", i.Version, i.Commit, i.GoVersion)
}

// String returns Get().String().
func String() string {
	return Get().String()
}
