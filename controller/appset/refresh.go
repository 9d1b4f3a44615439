package appset

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// RefreshAnnotation set to "true" on an ApplicationSet asks the
// controller to generate it again now, its git generators' branches and
// tags resolved afresh; the controller removes it. Argo CD's name, which
// its webhook sets too.
const RefreshAnnotation = "argocd.argoproj.io/application-set-refresh"

// Polling of the git generators, as Argo CD's requeueAfterSeconds.
const (
	// DefaultRequeueAfter is how often a set with git generators is
	// generated again when none says.
	DefaultRequeueAfter = 3 * time.Minute
	// DefaultRemoteRequeueAfter is the same for sets whose plugin, SCM
	// provider or pull request generators ask another service, as Argo CD.
	DefaultRemoteRequeueAfter = 30 * time.Minute
	// minRequeueAfter bounds how often a tenant's set may poll.
	minRequeueAfter = 10 * time.Second
)

// requeueAfter is when to generate set again without an event: the
// shortest requeueAfterSeconds of its git, clusterDecisionResource,
// plugin, SCM provider and pull request generators (0 disables it), 0 for
// a set without any.
func requeueAfter(set *v1alpha1.ApplicationSet) time.Duration {
	var out time.Duration
	for _, leaf := range leafGenerators(set.Spec.Generators) {
		var every *int64
		d := DefaultRequeueAfter
		switch {
		case leaf.Git != nil:
			every = leaf.Git.RequeueAfterSeconds
		case leaf.ClusterDecisionResource != nil:
			every = leaf.ClusterDecisionResource.RequeueAfterSeconds
		case leaf.Plugin != nil || leaf.SCMProvider != nil || leaf.PullRequest != nil:
			var g struct {
				RequeueAfterSeconds *int64 `json:"requeueAfterSeconds"`
			}
			for _, r := range []*runtime.RawExtension{leaf.Plugin, leaf.SCMProvider, leaf.PullRequest} {
				if r != nil && r.Raw != nil {
					_ = json.Unmarshal(r.Raw, &g) // a bad spec fails its generation
				}
			}
			every, d = g.RequeueAfterSeconds, DefaultRemoteRequeueAfter
		default:
			continue
		}
		if every != nil {
			if *every <= 0 {
				continue
			}
			d = max(time.Duration(*every)*time.Second, minRequeueAfter)
		}
		if out == 0 || d < out {
			out = d
		}
	}
	return out
}

// gitGenerators are the git generators of gens, at any depth.
func gitGenerators(gens []v1alpha1.ApplicationSetGenerator) []*v1alpha1.GitGenerator {
	var out []*v1alpha1.GitGenerator
	for _, leaf := range leafGenerators(gens) {
		if leaf.Git != nil {
			out = append(out, leaf.Git)
		}
	}
	return out
}

// leafGenerators are the generators of gens that are neither a matrix
// nor a merge, at any depth (nested matrices and merges decoded, to
// maxNesting).
func leafGenerators(gens []v1alpha1.ApplicationSetGenerator) []v1alpha1.ApplicationSetNestedGenerator {
	var out []v1alpha1.ApplicationSetNestedGenerator
	for _, g := range gens {
		switch {
		case g.Matrix != nil:
			out = append(out, nestedLeaves(g.Matrix.Generators, 1)...)
		case g.Merge != nil:
			out = append(out, nestedLeaves(g.Merge.Generators, 1)...)
		default:
			out = append(out, v1alpha1.ApplicationSetNestedGenerator{List: g.List, Clusters: g.Clusters, Git: g.Git,
				SCMProvider: g.SCMProvider, ClusterDecisionResource: g.ClusterDecisionResource, PullRequest: g.PullRequest, Plugin: g.Plugin})
		}
	}
	return out
}

func nestedLeaves(gens []v1alpha1.ApplicationSetNestedGenerator, depth int) []v1alpha1.ApplicationSetNestedGenerator {
	if depth > maxNesting {
		return nil
	}
	var out []v1alpha1.ApplicationSetNestedGenerator
	for _, g := range gens {
		var inner struct {
			Generators []v1alpha1.ApplicationSetNestedGenerator `json:"generators"`
		}
		switch {
		case g.Matrix != nil:
			if json.Unmarshal(g.Matrix.Raw, &inner) == nil {
				out = append(out, nestedLeaves(inner.Generators, depth+1)...)
			}
		case g.Merge != nil:
			if json.Unmarshal(g.Merge.Raw, &inner) == nil {
				out = append(out, nestedLeaves(inner.Generators, depth+1)...)
			}
		default:
			out = append(out, g)
		}
	}
	return out
}

// refreshPatch sets RefreshAnnotation.
var refreshPatch = client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+RefreshAnnotation+`":"true"}}}`))

// PushRefresher asks the controller to generate again the sets whose git
// generators read a pushed repository, by RefreshAnnotation: the API's
// webhook uses it, whichever process runs the controller.
type PushRefresher struct {
	// Client reads and annotates the ApplicationSets of Namespace.
	Client    client.Client
	Namespace string
}

// RefreshPushed annotates each set with a git generator for which reads
// says the push concerns its repoURL and revision, and returns how many.
func (p PushRefresher) RefreshPushed(ctx context.Context, reads func(repoURL, revision string) bool) (int, error) {
	var sets v1alpha1.ApplicationSetList
	if err := p.Client.List(ctx, &sets, client.InNamespace(p.Namespace)); err != nil {
		return 0, fmt.Errorf("list ApplicationSets: %w", err)
	}
	n := 0
	for i := range sets.Items {
		set := &sets.Items[i]
		for _, g := range gitGenerators(set.Spec.Generators) {
			if reads(g.RepoURL, g.Revision) {
				if err := p.Client.Patch(ctx, set, refreshPatch); client.IgnoreNotFound(err) != nil {
					return n, fmt.Errorf("refresh ApplicationSet %s/%s: %w", set.Namespace, set.Name, err)
				}
				n++
				break
			}
		}
	}
	return n, nil
}

// PullRequestRepo is the repository a forge's pull request event is
// about, as its webhook names it.
type PullRequestRepo struct {
	// Provider is the pullRequest generator's key for the forge: github,
	// gitlab, gitea, bitbucketServer or bitbucket.
	Provider string
	// Owner and Repo name the repository: the owner (organisation, user,
	// GitLab namespace path, Bitbucket Server project key) and its name.
	Owner, Repo string
	// ProjectID is GitLab's numeric project id; "" for the others.
	ProjectID string
}

// RefreshPullRequest annotates each set with a pullRequest generator on
// repo's forge and repository (or one whose owner or repository is
// templated), and returns how many.
func (p PushRefresher) RefreshPullRequest(ctx context.Context, repo PullRequestRepo) (int, error) {
	var sets v1alpha1.ApplicationSetList
	if err := p.Client.List(ctx, &sets, client.InNamespace(p.Namespace)); err != nil {
		return 0, fmt.Errorf("list ApplicationSets: %w", err)
	}
	n := 0
	for i := range sets.Items {
		set := &sets.Items[i]
		if !slices.ContainsFunc(leafGenerators(set.Spec.Generators), func(g v1alpha1.ApplicationSetNestedGenerator) bool {
			return g.PullRequest != nil && pullRequestReads(g.PullRequest.Raw, repo)
		}) {
			continue
		}
		if err := p.Client.Patch(ctx, set, refreshPatch); client.IgnoreNotFound(err) != nil {
			return n, fmt.Errorf("refresh ApplicationSet %s/%s: %w", set.Namespace, set.Name, err)
		}
		n++
	}
	return n, nil
}

// pullRequestReads says whether the pullRequest generator raw lists the
// pull requests of repo.
func pullRequestReads(raw []byte, repo PullRequestRepo) bool {
	type ownerRepo struct {
		Owner   string `json:"owner"`
		Project string `json:"project"`
		Repo    string `json:"repo"`
	}
	var g map[string]*ownerRepo
	if json.Unmarshal(raw, &g) != nil {
		return false
	}
	spec := g[repo.Provider]
	if spec == nil {
		return false
	}
	same := func(a, b string) bool { return strings.Contains(a, "{{") || strings.EqualFold(a, b) }
	switch repo.Provider {
	case "gitlab": // project is an id or a path
		return same(spec.Project, repo.ProjectID) || same(spec.Project, repo.Owner+"/"+repo.Repo)
	case "bitbucketServer":
		return same(spec.Project, repo.Owner) && same(spec.Repo, repo.Repo)
	}
	return same(spec.Owner, repo.Owner) && same(spec.Repo, repo.Repo)
}
