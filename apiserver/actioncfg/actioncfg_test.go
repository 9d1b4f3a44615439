package actioncfg

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A custom action that does not compile leaves the built-in actions
// running, with the error saying why the custom ones are missing.
func TestUpdate(t *testing.T) {
	deployment := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}}}
	var s Source
	names := func() ([]string, error) {
		e, err := s.Actions()
		list, derr := e.Discover(t.Context(), deployment)
		if derr != nil {
			t.Fatal(derr)
		}
		var out []string
		for _, a := range list {
			out = append(out, a.Name)
		}
		return out, err
	}
	if got, err := names(); err != nil || strings.Join(got, ",") != "pause,restart,resume,scale" {
		t.Errorf("before any settings: %v %v, want the built-in actions", got, err)
	}
	custom := "discovery.lua: return {bump = {}}\ndefinitions:\n- {name: bump, action.lua: return obj}\nmergeBuiltinActions: true\n"
	s.Update(map[string]string{"resource.customizations.actions.apps_Deployment": custom})
	if got, err := names(); err != nil || strings.Join(got, ",") != "bump,pause,restart,resume,scale" {
		t.Errorf("custom merged with built-in: %v %v", got, err)
	}
	s.Update(map[string]string{"resource.customizations.actions.apps_Deployment": "discovery.lua: 'return {'\ndefinitions: []\n"})
	if got, err := names(); err == nil || strings.Join(got, ",") != "pause,restart,resume,scale" {
		t.Errorf("broken script: actions %v, error %v; want the built-in ones and an error", got, err)
	}
	s.Update(nil)
	if got, err := names(); err != nil || len(got) != 4 {
		t.Errorf("settings gone: %v %v", got, err)
	}
}
