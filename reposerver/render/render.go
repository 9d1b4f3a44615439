package render

import (
	"errors"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Default limits, used where a Limits field is zero.
const (
	// DefaultMaxManifestSize bounds one YAML or JSON document: 10 MiB.
	DefaultMaxManifestSize int64 = 10 << 20
	// DefaultMaxCombinedSize bounds all documents of one render: 100 MiB.
	DefaultMaxCombinedSize int64 = 100 << 20
)

// Limits bound what one render may produce.
type Limits struct {
	MaxManifestSize int64 // bytes of one YAML/JSON document; 0 means DefaultMaxManifestSize (10 MiB)
	MaxCombinedSize int64 // bytes of all documents of one render; 0 means DefaultMaxCombinedSize (100 MiB)
}

// WithDefaults returns l with every zero (or negative) field replaced by its
// default, so callers can compare sizes against the fields directly.
func (l Limits) WithDefaults() Limits {
	if l.MaxManifestSize <= 0 {
		l.MaxManifestSize = DefaultMaxManifestSize
	}
	if l.MaxCombinedSize <= 0 {
		l.MaxCombinedSize = DefaultMaxCombinedSize
	}
	return l
}

// Request is what a renderer gets.
type Request struct {
	RepoRoot    string                     // absolute path of the checked-out repository; nothing outside it may be read
	Path        string                     // the app's path relative to RepoRoot ("" or "." = root)
	Source      v1alpha1.ApplicationSource // helm / kustomize / directory / plugin options (api/v1alpha1)
	AppName     string
	Project     string   // the app's project, for ARGOCD_APP_PROJECT_NAME
	Revision    string   // the resolved revision (commit SHA or chart version), for ARGOCD_APP_REVISION
	Namespace   string   // destination namespace
	KubeVersion string   // e.g. "1.37.2" or "v1.37.2"
	APIVersions []string // e.g. "apps/v1", "monitoring.coreos.com/v1/ServiceMonitor"
	Limits      Limits
	// FetchedFiles are the Helm value files the caller read for the
	// renderer, keyed as Source names them: those named $ref/path, read
	// from another source's checkout (helm.ReadRefFile; a file that does
	// not exist is absent), and those at a URL (helm.RemoteValueFile),
	// fetched under the installation's helm.valuesFileSchemes. Renderers
	// read no file over the network themselves.
	FetchedFiles map[string][]byte `json:",omitempty"`
	// RemoteBases are the Kustomize remote bases the kustomizations name
	// (resources, bases, components at a Git URL), keyed as written, each
	// fetched by the caller into a read-only copy of its repository. The
	// files they name by http(s) URL are in FetchedFiles, keyed by URL.
	// Renderers fetch nothing themselves.
	RemoteBases map[string]RemoteBase `json:",omitempty"`
	// HelmCharts are the charts the kustomizations' helmCharts pull
	// from chart repositories, unpacked by the caller, keyed by
	// ChartKey.
	HelmCharts map[string]string `json:",omitempty"`
	// KustomizeBuildOptions are the installation's `kustomize build`
	// flags (kustomize.buildOptions).
	KustomizeBuildOptions string `json:",omitempty"`
}

// ChartKey is the key of a chart of a chart repository in
// Request.HelmCharts.
func ChartKey(repo, name, version string) string {
	return repo + "\x00" + name + "\x00" + version
}

// RemoteBase is a Kustomize remote base as fetched: the directory Path in
// the copy of its repository at Root, which confines what it reads.
type RemoteBase struct {
	Root string
	Path string `json:",omitempty"`
}

// ErrOutsideRoot is wrapped whenever a path, or a symlink on the way to it,
// resolves outside the repository root.
var ErrOutsideRoot = errors.New("path outside the repository root")

// ErrTooLarge is wrapped when a render exceeds one of its Limits.
var ErrTooLarge = errors.New("manifest size limit exceeded")

// ErrBudgetExceeded is wrapped when a render ran out of the memory its
// worker process may use (a template or Jsonnet program that builds huge
// values).
var ErrBudgetExceeded = errors.New("render exceeded its memory budget")
