package appops

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Bounds of the manifests a sync carries instead of its source (Argo
// CD's app sync --local): the operation, and its copy in
// status.operationState, live in the Application object, which etcd caps
// at about 1.5 MiB.
const (
	MaxLocalManifests     = 250
	MaxLocalManifestBytes = 256 << 10
)

// ErrLocalAutoSync: automated sync would put the source back at once.
var ErrLocalAutoSync = errors.New("cannot sync local manifests while automated sync is enabled, except as a dry run: turn it off first (graphcd app set NAME --sync-policy none)")

// CheckLocalManifests checks the manifests a sync carries: within the
// bounds, each one object with apiVersion, kind and metadata.name. The
// error says which one is wrong and is fit for the user.
func CheckLocalManifests(manifests []string) error {
	if len(manifests) > MaxLocalManifests {
		return fmt.Errorf("manifests: %d objects, at most %d", len(manifests), MaxLocalManifests)
	}
	total := 0
	for i, m := range manifests {
		total += len(m)
		if total > MaxLocalManifestBytes {
			return fmt.Errorf("manifests: more than %d KiB in all", MaxLocalManifestBytes>>10)
		}
		if strings.Contains("\n"+m, "\n---") {
			if docs := strings.Split("\n"+m, "\n---"); len(docs) > 2 || strings.TrimSpace(docs[0]) != "" {
				return fmt.Errorf("manifests[%d]: one object per manifest, not a YAML stream", i)
			}
		}
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name         string `json:"name"`
				GenerateName string `json:"generateName"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(m), &obj); err != nil {
			return fmt.Errorf("manifests[%d]: not a YAML or JSON object: %w", i, err)
		}
		if obj.APIVersion == "" || obj.Kind == "" || (obj.Metadata.Name == "" && obj.Metadata.GenerateName == "") {
			return fmt.Errorf("manifests[%d]: want an object with apiVersion, kind and metadata.name", i)
		}
	}
	return nil
}

// autoSyncOn reports whether app's automated sync is enabled.
func autoSyncOn(app *v1alpha1.Application) bool {
	p := app.Spec.SyncPolicy
	return p != nil && p.Automated != nil && (p.Automated.Enabled == nil || *p.Automated.Enabled)
}
