package manifests

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/git"
)

// Generator renders a source and resolves revisions; reposerver.Service
// implements it, in process or over gRPC.
type Generator interface {
	GenerateManifests(ctx context.Context, req reposerver.ManifestRequest) (*reposerver.ManifestResponse, error)
	ResolveRevision(ctx context.Context, repo reposerver.Repository, revision string) (string, error)
}

// Renderer renders applications' sources with their projects' rules. The
// zero value is not usable: Repo is required. It is safe for concurrent
// use and must not be copied after first use.
type Renderer struct {
	// Repo is the repository server.
	Repo Generator
	// Credentials returns the repository of a URL with the credentials of
	// its repository Secret as the applications of project see them
	// (repocreds.Store.Lookup); nil uses none.
	Credentials func(ctx context.Context, repoURL, project string) (reposerver.Repository, error)
	// Keys reads ConfigMap GPGKeysConfigMap. Read past any cache, so a key
	// just added counts at once. Nil reads none: a project that requires
	// signed commits then refuses every commit.
	Keys client.Reader
	// Tools returns the installation's settings for the tools
	// (graphcd-cm's helm.valuesFileSchemes) at each render; nil sends
	// none, which leaves the repository server's defaults.
	Tools func() reposerver.ToolOptions

	// projects compiles each project once per generation.
	projects project.Cache
	// remoteRepos remembers, by source repository and path, the
	// repositories of the remote bases its kustomizations named last
	// time (remoteKey -> []string), so the next render sends them at
	// once instead of being told again.
	remoteRepos sync.Map
}

// maxRepoRounds bounds how often one render is asked again for the
// repositories of remote bases: nested bases in new repositories are
// found one level per round.
const maxRepoRounds = 4

// Request is one source of an application to render.
type Request struct {
	// App is the application the source belongs to: its name and
	// destination namespace go to the renderers (Helm's release name and
	// namespace).
	App *v1alpha1.Application
	// Project is App's project as the caller found it; nil when it does
	// not exist, which permits nothing.
	Project *v1alpha1.AppProject
	// Source is the source to render, one of App's.
	Source v1alpha1.ApplicationSource
	// Revision is the revision to render; "" renders Source.TargetRevision.
	Revision string
	// NoCache renders again even when the repository server has the result
	// cached (a hard refresh).
	NoCache bool
	// KubeVersion and APIVersions describe the destination cluster to the
	// render (Helm's .Capabilities, KUBE_VERSION, KUBE_API_VERSIONS);
	// empty leaves each tool's defaults.
	KubeVersion string
	APIVersions []string
	// Refs are the sources of App with a ref (a multi-source app), whose
	// files Source's Helm value files may name as $ref/path. Each must
	// be permitted by Project like Source, and is read with its own
	// repository's credentials.
	Refs []Ref
}

// Ref is a source other sources read files from, at a revision.
type Ref struct {
	Source v1alpha1.ApplicationSource
	// Revision is the revision to read; "" reads Source.TargetRevision.
	Revision string
}

// MissingProjectError is returned for an application whose project does
// not exist. Its message is Argo CD's and safe to show users.
type MissingProjectError struct {
	// Project is the name the application references.
	Project string
}

// Error names the missing project.
func (e *MissingProjectError) Error() string {
	return fmt.Sprintf("application references project %s which does not exist", e.Project)
}

// LookupError is returned when something a render needs cannot be read
// from the cluster: a repository's credentials, or the public keys of the
// project's signatureKeys. Its message may carry details of Secrets and
// ConfigMaps: the controller reports it in the app's conditions, which
// only those who may read the app see, and the API logs it and shows
// clients an internal error.
type LookupError struct {
	// What names what could not be read, without credentials.
	What string
	Err  error
}

// Error says what could not be read and why.
func (e *LookupError) Error() string { return e.What + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *LookupError) Unwrap() error { return e.Err }

// Render renders req.Source if req.Project permits it: see the package
// documentation for the rules, in the order they apply. Errors from the
// repository server are returned as they come, for the caller to word.
func (r *Renderer) Render(ctx context.Context, req Request) (*reposerver.ManifestResponse, error) {
	rules, err := r.rules(req)
	if err != nil {
		return nil, err
	}
	repo, err := r.repository(ctx, rules, req.Source)
	if err != nil {
		return nil, err
	}
	keys, err := r.publicKeys(ctx, req.Project, rules)
	if err != nil {
		return nil, err
	}
	refs, err := r.refSources(ctx, rules, req.Refs)
	if err != nil {
		return nil, err
	}
	mreq := reposerver.ManifestRequest{
		Repo: repo, Source: req.Source, Revision: req.Revision, NoCache: req.NoCache,
		AppName: req.App.Name, Project: rules.Name(), Namespace: req.App.Spec.Destination.Namespace, SignatureKeys: keys,
		KubeVersion: req.KubeVersion, APIVersions: req.APIVersions, RefSources: refs, Tools: r.tools(),
	}
	key := repourl.Normalize(req.Source.RepoURL) + "\x00" + req.Source.Path
	// Repositories remembered from the last render are sent when the
	// project permits them; those the repository server names now must
	// be permitted, or the render fails saying which.
	var remembered, needed []string
	if known, ok := r.remoteRepos.Load(key); ok {
		remembered = known.([]string)
	}
	for round := 0; ; round++ {
		if mreq.Repos, err = r.remoteRepositories(ctx, rules, remembered, needed); err != nil {
			return nil, err
		}
		res, err := r.Repo.GenerateManifests(ctx, mreq)
		var more *reposerver.RepositoriesNeededError
		if !errors.As(err, &more) || round == maxRepoRounds {
			if err == nil && len(mreq.Repos) > 0 {
				urls := make([]string, len(mreq.Repos))
				for i, repo := range mreq.Repos {
					urls[i] = repo.URL
				}
				r.remoteRepos.Store(key, urls)
			}
			return res, err
		}
		needed = append(slices.Clone(needed), more.URLs...)
	}
}

// remoteRepositories checks the repositories of remote bases and charts
// against rules, as sources are, and looks up their credentials: a
// tenant's kustomization fetches from no repository its project does not
// permit, with no credentials the project may not use. A remembered
// repository that fails is left out (the kustomization may not need it
// any more); a needed one fails the render.
func (r *Renderer) remoteRepositories(ctx context.Context, rules *project.Rules, remembered, needed []string) ([]reposerver.Repository, error) {
	var out []reposerver.Repository
	seen := map[string]bool{}
	for _, u := range needed {
		repo, err := r.repository(ctx, rules, v1alpha1.ApplicationSource{RepoURL: u})
		if err != nil {
			return nil, fmt.Errorf("remote base: %w", err)
		}
		seen[repourl.Normalize(u)] = true
		out = append(out, repo)
	}
	for _, u := range remembered {
		if seen[repourl.Normalize(u)] {
			continue
		}
		if repo, err := r.repository(ctx, rules, v1alpha1.ApplicationSource{RepoURL: u}); err == nil {
			seen[repourl.Normalize(u)] = true
			out = append(out, repo)
		}
	}
	return out, nil
}

func (r *Renderer) tools() reposerver.ToolOptions {
	if r.Tools == nil {
		return reposerver.ToolOptions{}
	}
	return r.Tools()
}

// refSources checks each ref's repository against rules and looks up its
// credentials, keyed "$"+ref as value files name them.
func (r *Renderer) refSources(ctx context.Context, rules *project.Rules, refs []Ref) (map[string]reposerver.RefSource, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	out := make(map[string]reposerver.RefSource, len(refs))
	for _, ref := range refs {
		repo, err := r.repository(ctx, rules, ref.Source)
		if err != nil {
			return nil, err
		}
		rev := ref.Revision
		if rev == "" {
			rev = ref.Source.TargetRevision
		}
		out["$"+ref.Source.Ref] = reposerver.RefSource{Repo: repo, TargetRevision: rev}
	}
	return out, nil
}

// ResolveRevision resolves req.Revision (or req.Source.TargetRevision) of
// req.Source if req.Project permits it: a commit SHA for Git, the
// version constraint as it is for a Helm repository.
func (r *Renderer) ResolveRevision(ctx context.Context, req Request) (string, error) {
	repo, err := r.Repository(ctx, req)
	if err != nil {
		return "", err
	}
	rev := req.Revision
	if rev == "" {
		rev = req.Source.TargetRevision
	}
	return r.Repo.ResolveRevision(ctx, repo, rev)
}

// Repository returns the repository of req.Source with its credentials if
// req.Project permits it, for reads of the repository other than a render
// (its commits). req.Revision and req.NoCache are not used.
func (r *Renderer) Repository(ctx context.Context, req Request) (reposerver.Repository, error) {
	rules, err := r.rules(req)
	if err != nil {
		return reposerver.Repository{}, err
	}
	return r.repository(ctx, rules, req.Source)
}

// rules returns req.Project compiled.
func (r *Renderer) rules(req Request) (*project.Rules, error) {
	if req.Project == nil {
		name := req.App.Spec.Project
		if name == "" {
			name = project.DefaultProjectName
		}
		return nil, &MissingProjectError{Project: name}
	}
	return r.projects.Rules(req.Project)
}

// repository checks src's repository against rules and looks up its
// credentials for the project: a repository Secret scoped to another
// project gives none, and the error of a lookup never names one.
func (r *Renderer) repository(ctx context.Context, rules *project.Rules, src v1alpha1.ApplicationSource) (reposerver.Repository, error) {
	if err := rules.SourceAllowed(src.RepoURL); err != nil {
		return reposerver.Repository{}, err
	}
	repo := reposerver.Repository{URL: src.RepoURL}
	if r.Credentials != nil {
		var err error
		if repo, err = r.Credentials(ctx, src.RepoURL, rules.Name()); err != nil {
			return reposerver.Repository{}, &LookupError{What: "credentials of " + repourl.Redact(src.RepoURL), Err: err}
		}
	}
	// A source naming a chart is in a Helm repository, registered or
	// not, as in Argo CD.
	if src.Chart != "" && repo.Type == "" {
		repo.Type = reposerver.RepoTypeHelm
	}
	return repo, nil
}

// SignatureRefused reports whether err refuses a commit for the project's
// signatureKeys: the commit is unsigned, no listed key verifies its
// signature, or no listed key has a public key. Rendering again gives the
// same refusal until the commit or the keys change.
func SignatureRefused(err error) bool {
	return errors.Is(err, git.ErrUnsigned) || errors.Is(err, git.ErrSignatureInvalid) || errors.Is(err, ErrNoPublicKey)
}
