package appset

import (
	"context"
	"encoding/json"
	"fmt"
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
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+RefreshAnnotation+`":"true"}}}`))
	for i := range sets.Items {
		set := &sets.Items[i]
		for _, g := range gitGenerators(set.Spec.Generators) {
			if reads(g.RepoURL, g.Revision) {
				if err := p.Client.Patch(ctx, set, patch); client.IgnoreNotFound(err) != nil {
					return n, fmt.Errorf("refresh ApplicationSet %s/%s: %w", set.Namespace, set.Name, err)
				}
				n++
				break
			}
		}
	}
	return n, nil
}
