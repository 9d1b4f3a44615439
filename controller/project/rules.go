package project

import (
	"errors"
	"time"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Rules is an AppProject compiled for checking: every glob, schedule and
// time zone parsed once. Build it with Compile when a project changes
// (once per metadata.generation; see Cache) and use it for every check;
// the package-level functions compile on each call. A Rules is immutable
// and safe for concurrent use.
type Rules struct {
	name          string
	repos         []repoRule
	dests         []destRule
	clusterAllow  kindList
	clusterDeny   kindList
	nsAllow       kindList
	nsAllowAll    bool // namespaceResourceWhitelist unset
	nsDeny        kindList
	appNamespaces []nsRule
	windows       []*window
	orphansOn     bool
	orphansWarn   bool
	orphans       []orphanRule
	keys          []string
	accounts      []saRule
	// onlyScoped is spec.permitOnlyProjectScopedClusters.
	onlyScoped bool
}

// Compile checks and compiles proj. A spec that does not validate gives a
// *InvalidError listing every problem and no Rules: such a project permits
// nothing until it is fixed.
func Compile(proj *v1alpha1.AppProject) (*Rules, error) {
	if proj == nil {
		return nil, errors.New("no project")
	}
	r, probs := compile(proj.Name, &proj.Spec)
	if err := probs.err(proj.Name); err != nil {
		return nil, err
	}
	return r, nil
}

// Validate checks every glob, sync window, kind, signature key and
// destination service account of spec and returns a *InvalidError listing
// the problems, or nil. Project role policies are checked by the RBAC
// package, not here.
func Validate(spec *v1alpha1.AppProjectSpec) error {
	if spec == nil {
		return nil
	}
	_, probs := compile("", spec)
	return probs.err("")
}

func compile(name string, spec *v1alpha1.AppProjectSpec) (*Rules, *problems) {
	probs := &problems{}
	r := &Rules{
		name:          name,
		repos:         compileRepos(spec.SourceRepos, probs),
		dests:         compileDestinations(spec.Destinations, probs),
		clusterAllow:  compileKinds("spec.clusterResourceWhitelist", spec.ClusterResourceWhitelist, probs),
		clusterDeny:   compileKinds("spec.clusterResourceBlacklist", spec.ClusterResourceBlacklist, probs),
		nsAllow:       compileKinds("spec.namespaceResourceWhitelist", spec.NamespaceResourceWhitelist, probs),
		nsAllowAll:    spec.NamespaceResourceWhitelist == nil,
		nsDeny:        compileKinds("spec.namespaceResourceBlacklist", spec.NamespaceResourceBlacklist, probs),
		appNamespaces: compileSourceNamespaces("spec.sourceNamespaces", spec.SourceNamespaces, probs),
		windows:       compileWindows(spec.SyncWindows, probs),
		orphansOn:     spec.OrphanedResources != nil,
		orphansWarn:   OrphanedWarn(spec.OrphanedResources),
		orphans:       compileOrphans(spec.OrphanedResources, probs),
		keys:          compileSignatureKeys(spec.SignatureKeys, probs),
		accounts:      compileServiceAccounts(spec.DestinationServiceAccounts, probs),
		onlyScoped:    spec.PermitOnlyProjectScopedClusters,
	}
	return r, probs
}

// AppAllowed checks what an application's spec asks of the project: the
// repository of every source, and the destination — the cluster by the
// server and the name it is registered under (pass both when it is
// registered; see DestinationAllowed) and the project it is scoped to (see
// ClusterAllowed), and the namespace. The API refuses a spec that fails it
// when the spec is written, and the controller neither renders nor
// compares such an application, so a repository the project does not
// permit is never fetched on its behalf.
func (r *Rules) AppAllowed(spec *v1alpha1.ApplicationSpec, dest Cluster) error {
	if spec.Source != nil {
		if err := r.SourceAllowed(spec.Source.RepoURL); err != nil {
			return err
		}
	}
	for i := range spec.Sources {
		if err := r.SourceAllowed(spec.Sources[i].RepoURL); err != nil {
			return err
		}
	}
	return r.TargetAllowed(dest, spec.Destination.Namespace)
}

// TargetAllowed checks a destination: the cluster (by server and name,
// and the project its Secret scopes it to) and the namespace.
func (r *Rules) TargetAllowed(dest Cluster, namespace string) error {
	if err := r.DestinationAllowed(dest.Server, dest.Name, namespace); err != nil {
		return err
	}
	return r.ClusterAllowed(dest)
}

// Name returns the project's name.
func (r *Rules) Name() string { return r.name }

// HasSyncWindows reports whether the project has sync windows at all, so
// callers can skip evaluating them.
func (r *Rules) HasSyncWindows() bool { return len(r.windows) > 0 }

// The functions below check one thing against a project without keeping
// the compiled form. Each returns the *InvalidError of a project that does
// not validate, so a broken project refuses everything.

// SourceAllowed reports whether applications of proj may deploy from
// repoURL; see Rules.SourceAllowed.
func SourceAllowed(proj *v1alpha1.AppProject, repoURL string) error {
	r, err := Compile(proj)
	if err != nil {
		return err
	}
	return r.SourceAllowed(repoURL)
}

// AppAllowed reports whether an application of proj may have spec with
// its destination cluster dest; see Rules.AppAllowed.
func AppAllowed(proj *v1alpha1.AppProject, spec *v1alpha1.ApplicationSpec, dest Cluster) error {
	r, err := Compile(proj)
	if err != nil {
		return err
	}
	return r.AppAllowed(spec, dest)
}

// DestinationAllowed reports whether applications of proj may deploy to a
// cluster (server and/or name) and namespace; see Rules.DestinationAllowed.
func DestinationAllowed(proj *v1alpha1.AppProject, server, name, namespace string) error {
	r, err := Compile(proj)
	if err != nil {
		return err
	}
	return r.DestinationAllowed(server, name, namespace)
}

// ClusterResourceAllowed reports whether applications of proj may create
// cluster-scoped resources of group and kind; see
// Rules.ClusterResourceAllowed.
func ClusterResourceAllowed(proj *v1alpha1.AppProject, group, kind string) error {
	r, err := Compile(proj)
	if err != nil {
		return err
	}
	return r.ClusterResourceAllowed(group, kind)
}

// NamespaceResourceAllowed reports whether applications of proj may create
// namespaced resources of group and kind; see
// Rules.NamespaceResourceAllowed.
func NamespaceResourceAllowed(proj *v1alpha1.AppProject, group, kind string) error {
	r, err := Compile(proj)
	if err != nil {
		return err
	}
	return r.NamespaceResourceAllowed(group, kind)
}

// AppNamespaceAllowed reports whether an Application in namespace may use
// proj; see Rules.AppNamespaceAllowed.
func AppNamespaceAllowed(proj *v1alpha1.AppProject, namespace, controllerNamespace string) error {
	r, err := Compile(proj)
	if err != nil {
		return err
	}
	return r.AppNamespaceAllowed(namespace, controllerNamespace)
}

// SyncWindows evaluates proj's sync windows for target at the given moment;
// see Rules.SyncWindows and WindowState.Allowed.
func SyncWindows(proj *v1alpha1.AppProject, target WindowTarget, at time.Time) (WindowState, error) {
	r, err := Compile(proj)
	if err != nil {
		return WindowState{}, err
	}
	return r.SyncWindows(target, at), nil
}
