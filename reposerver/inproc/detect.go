package inproc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
)

// kustomizationNames are the file names kustomize reads, in its order.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// DetectSourceType decides which tool renders a source checked out at
// repoRoot, as Argo CD does: an explicit helm, kustomize, plugin or
// directory block wins (more than one is an error); otherwise a Chart.yaml
// in the path means Helm, a kustomization file means Kustomize, and
// anything else is a directory of manifests.
func DetectSourceType(repoRoot string, src v1alpha1.ApplicationSource) (v1alpha1.ApplicationSourceType, error) {
	var explicit []v1alpha1.ApplicationSourceType
	if src.Helm != nil {
		explicit = append(explicit, v1alpha1.ApplicationSourceTypeHelm)
	}
	if src.Kustomize != nil {
		explicit = append(explicit, v1alpha1.ApplicationSourceTypeKustomize)
	}
	if src.Directory != nil {
		explicit = append(explicit, v1alpha1.ApplicationSourceTypeDirectory)
	}
	if src.Plugin != nil {
		explicit = append(explicit, v1alpha1.ApplicationSourceTypePlugin)
	}
	switch len(explicit) {
	case 1:
		return explicit[0], nil
	case 0:
	default:
		return "", fmt.Errorf("source sets options for more than one tool (%v); set only one", explicit)
	}
	appDir, err := render.ResolveInRoot(repoRoot, cleanRel(src.Path))
	if err != nil {
		return "", fmt.Errorf("app path %q: %w", src.Path, err)
	}
	st, err := os.Stat(appDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("app path %q does not exist in the repository", src.Path)
		}
		return "", fmt.Errorf("app path %q: %w", src.Path, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("app path %q is not a directory", src.Path)
	}
	if exists(filepath.Join(appDir, "Chart.yaml")) {
		return v1alpha1.ApplicationSourceTypeHelm, nil
	}
	for _, name := range kustomizationNames {
		if exists(filepath.Join(appDir, name)) {
			return v1alpha1.ApplicationSourceTypeKustomize, nil
		}
	}
	return v1alpha1.ApplicationSourceTypeDirectory, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
