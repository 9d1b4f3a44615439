package reposerver

import (
	"context"
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/gittree"
)

// Service renders manifests and answers questions about repositories.
// Implementations are safe for concurrent use.
type Service interface {
	// GenerateManifests renders the source at the requested revision.
	GenerateManifests(ctx context.Context, req ManifestRequest) (*ManifestResponse, error)
	// ResolveRevision turns a branch, tag, semver constraint, short SHA or
	// HEAD into a commit SHA (Git), a chart version (Helm), or a tag,
	// constraint or digest into a manifest digest (an OCI artifact).
	ResolveRevision(ctx context.Context, repo Repository, revision string) (string, error)
	// ListRefs lists the branches and tags of a Git repository, or the
	// tags of an OCI repository.
	ListRefs(ctx context.Context, repo Repository) (git.Refs, error)
	// GetAppDetails reports the detected tool and its options (Helm values
	// files and parameters, Kustomize images) for a source.
	GetAppDetails(ctx context.Context, req ManifestRequest) (*AppDetails, error)
	// TestRepository checks that the repository can be reached with its
	// credentials.
	TestRepository(ctx context.Context, repo Repository) error
	// ListCommits lists up to limit commits (at most git.MaxLogCommits) of the
	// history of revision in a Git repository, newest first, with author,
	// date, message and tags: the revisions an application's history and
	// its revision picker show. Helm repositories have no commits; they
	// get an error wrapping ErrNotGit.
	ListCommits(ctx context.Context, repo Repository, revision string, limit int) ([]Commit, error)
	// MatchTree returns the directories, or the files with their
	// contents, that req's globs match in a Git repository at revision,
	// within gittree's bounds: what the git generators of ApplicationSets
	// read. Helm and OCI repositories get an error wrapping ErrNotGit.
	MatchTree(ctx context.Context, repo Repository, revision string, req gittree.Request) (*gittree.Result, error)
}

// ErrNotGit is wrapped by errors of Git-only methods called on a Helm
// repository.
var ErrNotGit = errors.New("not a Git repository")

// Commit is one commit of a history (see Service.ListCommits).
type Commit = git.Commit

// RepoType says how a repository is reached.
type RepoType string

// Repository types, as Argo CD's repository secrets name them.
const (
	RepoTypeGit  RepoType = "git"
	RepoTypeHelm RepoType = "helm"
	// RepoTypeOCI is an OCI repository whose artifacts hold manifests
	// (Argo CD's OCI source); an oci:// URL without a chart is one too.
	RepoTypeOCI RepoType = "oci"
)

// Credentials authenticate to a repository. They never appear in logs or
// errors (their String method redacts).
type Credentials = git.Credentials

// Repository identifies a source repository and how to reach it.
type Repository struct {
	URL  string
	Type RepoType // "" means git, helm when the source names a chart, oci for an oci:// URL without one
	// EnableOCI treats a Helm repository URL without a scheme as an OCI
	// registry.
	EnableOCI bool
	// InsecureOCIForceHTTP reaches an OCI registry over plain HTTP
	// (Argo CD's insecureOCIForceHttp).
	InsecureOCIForceHTTP bool
	Credentials          *Credentials
}

// ManifestRequest asks for the manifests of one application source.
type ManifestRequest struct {
	Repo Repository
	// Source holds the path, target revision and tool options.
	Source v1alpha1.ApplicationSource
	// Revision overrides Source.TargetRevision when set (a sync to a given
	// revision, history, rollback).
	Revision string
	AppName  string
	// Project is the app's project, for the build environment's
	// ARGOCD_APP_PROJECT_NAME.
	Project     string
	Namespace   string
	KubeVersion string
	APIVersions []string
	// NoCache skips the manifest cache (a hard refresh); the result is still
	// stored.
	NoCache bool
	// HelmRepos are the configured repositories whose credentials a chart's
	// dependencies may use: a dependency repository URL takes the
	// credentials of the entry whose URL is its longest prefix.
	HelmRepos []Repository
	// SignatureKeys are ASCII-armored OpenPGP public keys (a project's
	// signatureKeys, resolved to keys by the caller). When set, the Git
	// commit must carry a signature one of them verifies, or nothing is
	// rendered.
	SignatureKeys []string
	// RefSources are the other sources of a multi-source application
	// that Source's Helm value files name as $ref/path, keyed by "$"
	// and their ref. Each is read from its own checkout with its own
	// credentials; a ref Source's value files use but is missing here
	// fails the render.
	RefSources map[string]RefSource
	// Tools are the installation's settings for the tools (graphcd-cm).
	Tools ToolOptions
	// Repos are the repositories the source's remote references (a
	// kustomization's remote bases) may be fetched from, each with the
	// credentials of its own repository Secret, as the app's project
	// permits them. A remote base in a repository missing here fails the
	// render with a *RepositoriesNeededError naming it.
	Repos []Repository `json:",omitempty"`
}

// RepositoriesNeededError is GenerateManifests' answer to a source whose
// kustomizations name remote bases in repositories the request does not
// carry in Repos. The caller checks each against the app's project,
// looks up its credentials and asks again with them.
type RepositoriesNeededError struct {
	// URLs are the repositories, as the kustomizations name them.
	URLs []string
}

// Error names the repositories, without credentials.
func (e *RepositoriesNeededError) Error() string {
	urls := make([]string, len(e.URLs))
	for i, u := range e.URLs {
		urls[i] = repourl.Redact(u)
	}
	return "remote bases need the repositories " + strings.Join(urls, ", ")
}

// ToolOptions are the installation's settings for the tools that render,
// from graphcd-cm (Argo CD's argocd-cm keys). The caller sends them with
// each request, as Argo CD's controller does, so a repository server
// needs no settings of its own.
type ToolOptions struct {
	// HelmValuesFileSchemes are the URL schemes a Helm value file may be
	// fetched with (helm.valuesFileSchemes); empty means
	// DefaultValuesFileSchemes. graphcd fetches http and https only:
	// others are refused even when listed.
	HelmValuesFileSchemes []string `json:",omitempty"`
	// KustomizeBuildOptions are `kustomize build` flags for every
	// Kustomize source (kustomize.buildOptions), such as --enable-helm.
	KustomizeBuildOptions string `json:",omitempty"`
}

// DefaultValuesFileSchemes are the schemes of remote Helm value files
// when helm.valuesFileSchemes is unset: Argo CD's.
var DefaultValuesFileSchemes = []string{"http", "https"}

// ValuesFileSchemes returns the allowed value file schemes.
func (o ToolOptions) ValuesFileSchemes() []string {
	if len(o.HelmValuesFileSchemes) == 0 {
		return DefaultValuesFileSchemes
	}
	return o.HelmValuesFileSchemes
}

// RefSource is a source of a multi-source application that others read
// value files from: a Git repository at a revision.
type RefSource struct {
	Repo Repository
	// TargetRevision is the revision to read; the server resolves it.
	TargetRevision string
}

// ManifestResponse is the result of a render.
type ManifestResponse struct {
	Manifests []*unstructured.Unstructured
	// Revision is the commit SHA, the chart version, or the OCI
	// artifact's manifest digest (sha256:...), rendered.
	Revision   string
	SourceType v1alpha1.ApplicationSourceType
	// Cached reports whether the manifests came from the cache.
	Cached bool
}

// AppDetails describes a source without rendering it.
type AppDetails struct {
	SourceType v1alpha1.ApplicationSourceType
	// Helm lists the chart's values files (in the chart directory) and its
	// default values, for a Helm source.
	Helm *HelmDetails
	// Kustomize lists the images the kustomization sets, for a Kustomize
	// source.
	Kustomize *KustomizeDetails
}

// HelmDetails are the options a Helm chart offers.
type HelmDetails struct {
	ValueFiles []string
	// Values is the chart's values.yaml.
	Values string
}

// KustomizeDetails are the options a kustomization offers.
type KustomizeDetails struct {
	Images []string
}
