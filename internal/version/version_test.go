package version

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFillFromBuildInfo(t *testing.T) {
	tests := []struct {
		name string
		in   Info
		bi   debug.BuildInfo
		want Info
	}{
		{
			name: "stamped build keeps linker values",
			in:   Info{Version: "v1.2.3", Commit: "abc"},
			bi: debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "fff"},
			}},
			want: Info{Version: "v1.2.3", Commit: "abc"},
		},
		{
			name: "unstamped build uses module version and vcs revision",
			in:   Info{Version: "dev"},
			bi: debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "fff"}, {Key: "vcs.modified", Value: "true"},
			}},
			want: Info{Version: "v0.1.0", Commit: "fff-dirty"},
		},
		{
			name: "devel module version stays dev",
			in:   Info{Version: "dev"},
			bi:   debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			want: Info{Version: "dev"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in
			fillFromBuildInfo(&got, &tt.bi)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("fillFromBuildInfo (-got +want):\n%s", diff)
			}
		})
	}
}

func TestString(t *testing.T) {
	got := Info{Version: "dev", Commit: "abc123", GoVersion: "go1.26.8"}.String()
	if diff := cmp.Diff(got, "graphcd dev (commit abc123, go1.26.8)"); diff != "" {
		t.Errorf("String (-got +want):\n%s", diff)
	}
	if s := String(); !strings.HasPrefix(s, "graphcd ") {
		t.Errorf("String() = %q, want prefix %q", s, "graphcd ")
	}
}
