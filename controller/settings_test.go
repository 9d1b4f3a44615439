package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/controller/engineopts"
	"github.com/graphcd/graphcd/internal/settings"
)

// A Lua check that does not compile is refused and the reconciler keeps
// the settings it had; a valid one replaces them.
func TestUpdateSettings(t *testing.T) {
	const key = "resource.customizations.health.test.graphcd.io_Widget"
	r, err := NewReconciler(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		lua        string
		wantErr    bool
		wantChecks int
	}{
		{name: "valid check", lua: "return {status = \"Degraded\"}", wantChecks: 1},
		{name: "broken check keeps the previous", lua: "return {status = ", wantErr: true, wantChecks: 1},
		{name: "no check", lua: "", wantChecks: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := map[string]string{}
			if tt.lua != "" {
				data[key] = tt.lua
			}
			s, err := settings.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			err = r.UpdateSettings(s)
			if got := err != nil; got != tt.wantErr {
				t.Errorf("UpdateSettings error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(len(engineopts.HealthChecks(r.Settings())), tt.wantChecks); diff != "" {
				t.Errorf("health checks (-got +want):\n%s", diff)
			}
		})
	}
}
