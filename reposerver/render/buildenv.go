package render

import (
	"os"
	"strings"
)

// BuildEnvNames are Argo CD's build environment variables, the names a
// render's options may refer to as $NAME or ${NAME}.
var BuildEnvNames = []string{
	"ARGOCD_APP_NAME",
	"ARGOCD_APP_NAMESPACE",
	"ARGOCD_APP_PROJECT_NAME",
	"ARGOCD_APP_REVISION",
	"ARGOCD_APP_REVISION_SHORT",
	"ARGOCD_APP_REVISION_SHORT_8",
	"ARGOCD_APP_SOURCE_PATH",
	"ARGOCD_APP_SOURCE_REPO_URL",
	"ARGOCD_APP_SOURCE_TARGET_REVISION",
	"KUBE_VERSION",
	"KUBE_API_VERSIONS",
}

// BuildEnv is the build environment of one render: each of BuildEnvNames
// with its value. Helm parameters and value file paths, Jsonnet variables,
// Kustomize overrides and plugin environments are expanded with it, and
// plugins receive it as their environment.
type BuildEnv map[string]string

// BuildEnv returns the request's build environment. ARGOCD_APP_REVISION is
// the resolved revision (Source.TargetRevision when the request names
// none) and KUBE_VERSION the cluster's semantic version without a leading
// "v" or trailing pre-release and build metadata, as in Argo CD.
func (r Request) BuildEnv() BuildEnv {
	rev := r.Revision
	if rev == "" {
		rev = r.Source.TargetRevision
	}
	srcPath := r.Source.Path
	if srcPath == "" {
		srcPath = r.Path
	}
	kube := strings.TrimPrefix(r.KubeVersion, "v")
	if i := strings.IndexAny(kube, "+-"); i >= 0 {
		kube = kube[:i]
	}
	return BuildEnv{
		"ARGOCD_APP_NAME":                   r.AppName,
		"ARGOCD_APP_NAMESPACE":              r.Namespace,
		"ARGOCD_APP_PROJECT_NAME":           r.Project,
		"ARGOCD_APP_REVISION":               rev,
		"ARGOCD_APP_REVISION_SHORT":         prefix(rev, 7),
		"ARGOCD_APP_REVISION_SHORT_8":       prefix(rev, 8),
		"ARGOCD_APP_SOURCE_PATH":            srcPath,
		"ARGOCD_APP_SOURCE_REPO_URL":        r.Source.RepoURL,
		"ARGOCD_APP_SOURCE_TARGET_REVISION": r.Source.TargetRevision,
		"KUBE_VERSION":                      kube,
		"KUBE_API_VERSIONS":                 strings.Join(r.APIVersions, ","),
	}
}

// Expand replaces $NAME and ${NAME} in s as Argo CD does: a name the
// environment does not hold becomes empty, and "$$" is a literal "$".
func (e BuildEnv) Expand(s string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	return os.Expand(s, func(name string) string {
		if name == "$" {
			return "$"
		}
		return e[name]
	})
}

func prefix(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
