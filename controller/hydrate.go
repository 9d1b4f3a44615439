package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/hydrator"
)

// Committer commits files to a branch of a Git repository and pushes
// them; git.Client implements it.
type Committer interface {
	// CommitFiles makes req.Dir of req.Branch hold exactly req.Files; see
	// git.Client.CommitFiles.
	CommitFiles(ctx context.Context, req git.CommitRequest) (git.CommitResult, error)
}

// errHydrationOff is the failure of a hydration in a controller built
// without a Committer or write credentials.
var errHydrationOff = errors.New("source hydration is not configured in this controller (no committer or write credentials lookup)")

// validateHydrator checks what a source hydrator commits to and syncs
// from: a path or branch that could escape its directory or be read as
// something else is an invalid spec.
func validateHydrator(sh *v1alpha1.SourceHydrator) error {
	if sh.DrySource.RepoURL == "" {
		return fmt.Errorf("%w: sourceHydrator.drySource.repoURL is required", errInvalidSpec)
	}
	if err := git.ValidateCommitDir(sh.SyncSource.Path); err != nil {
		return fmt.Errorf("%w: sourceHydrator.syncSource.path: %w", errInvalidSpec, err)
	}
	if _, err := git.BranchRef(sh.SyncSource.TargetBranch); err != nil {
		return fmt.Errorf("%w: sourceHydrator.syncSource.targetBranch: %w", errInvalidSpec, err)
	}
	if sh.HydrateTo != nil {
		if _, err := git.BranchRef(sh.HydrateTo.TargetBranch); err != nil {
			return fmt.Errorf("%w: sourceHydrator.hydrateTo.targetBranch: %w", errInvalidSpec, err)
		}
	}
	return nil
}

// hydrateBranch is the branch hydrated manifests are committed to:
// hydrateTo's when set, else syncSource's.
func hydrateBranch(sh *v1alpha1.SourceHydrator) string {
	if sh.HydrateTo != nil {
		return sh.HydrateTo.TargetBranch
	}
	return sh.SyncSource.TargetBranch
}

// hydrate runs the app's source hydrator when it has one: it resolves the
// dry source and, when its commit (or the sourceHydrator spec) differs
// from the last successful hydration's, renders it and commits the
// manifests to the hydrate branch. The outcome goes to
// status.sourceHydrator and the HydrationError condition; a failure is
// tried again at the next reconcile. Between dry commits this costs one
// revision resolution, which the repository server caches.
func (p *pass) hydrate(ctx context.Context) (bool, error) {
	sh := p.app.Spec.SourceHydrator
	if sh == nil {
		clearCondition(p.status, v1alpha1.ApplicationConditionHydrationError)
		return false, nil
	}
	drySHA, err := p.r.hydrate(ctx, &p.app, p.t, p.status)
	if err == nil {
		clearCondition(p.status, v1alpha1.ApplicationConditionHydrationError)
		return false, nil
	}
	finished := p.now
	op := &v1alpha1.HydrateOperation{
		StartedAt: p.now, FinishedAt: &finished, Phase: v1alpha1.HydrateOperationPhaseFailed,
		Message: "hydration failed: " + err.Error(), DrySHA: drySHA, SourceHydrator: *sh.DeepCopy(),
	}
	// The same failure again keeps its time, so a failing app's status
	// does not change at every reconcile.
	if cur := p.status.SourceHydrator.CurrentOperation; cur != nil && cur.Phase == op.Phase && cur.Message == op.Message &&
		cur.DrySHA == op.DrySHA && reflect.DeepEqual(cur.SourceHydrator, op.SourceHydrator) {
		op.StartedAt, op.FinishedAt = cur.StartedAt, cur.FinishedAt
	}
	p.status.SourceHydrator.CurrentOperation = op
	setCondition(p.status, v1alpha1.ApplicationConditionHydrationError, op.Message, p.now)
	return false, nil
}

// hydrate hydrates app's dry source when it moved (see pass.hydrate) and
// records a success in status. It returns the dry commit it resolved ("" when
// it got no further).
func (r *Reconciler) hydrate(ctx context.Context, app *v1alpha1.Application, t *target, status *v1alpha1.ApplicationStatus) (string, error) {
	sh := app.Spec.SourceHydrator
	if err := validateHydrator(sh); err != nil {
		return "", err
	}
	proj, err := r.project(ctx, app)
	if err != nil {
		return "", err
	}
	dry := sh.GetDrySource()
	req := manifests.Request{App: app, Project: proj, Source: dry}
	if mode := refreshMode(app); mode != "" {
		r.invalidate(dry.RepoURL, mode)
	}
	drySHA, err := r.manifests.ResolveRevision(ctx, req)
	if err != nil {
		return "", fmt.Errorf("resolve drySource.targetRevision %q: %w", sh.DrySource.TargetRevision, err)
	}
	last := status.SourceHydrator.LastSuccessfulOperation
	if last != nil && last.DrySHA == drySHA && reflect.DeepEqual(last.SourceHydrator, *sh) {
		return drySHA, nil
	}
	if r.opts.Committer == nil || r.opts.WriteRepoFor == nil {
		return drySHA, errHydrationOff
	}
	started := metav1.Now()
	req.Revision = drySHA
	if t != nil && t.liveErr() == nil {
		req.KubeVersion, req.APIVersions = t.dest.Live.Capabilities()
	}
	res, err := r.manifests.Render(ctx, req)
	if err != nil {
		return drySHA, fmt.Errorf("render drySource: %w", err)
	}
	meta := r.dryCommit(ctx, req, drySHA)
	files, err := hydrator.Files(res.Manifests, meta)
	if err != nil {
		return drySHA, err
	}
	// The write Secret is looked up for the app's project, whose
	// sourceRepos the resolution above already checked for this URL.
	write, err := r.opts.WriteRepoFor(ctx, dry.RepoURL, proj.Name)
	if err != nil {
		return drySHA, fmt.Errorf("write credentials: %w", err)
	}
	commit, err := r.opts.Committer.CommitFiles(ctx, git.CommitRequest{
		RepoURL: dry.RepoURL, Credentials: write.Credentials, Branch: hydrateBranch(sh), Dir: sh.SyncSource.Path,
		Files: files, Message: hydrator.Message(meta),
	})
	if err != nil {
		return drySHA, fmt.Errorf("commit to %s: %w", hydrateBranch(sh), err)
	}
	if commit.Pushed {
		// The comparison that follows must see the new commit.
		if inv, ok := r.opts.Repo.(RevisionInvalidator); ok {
			inv.InvalidateRevision(dry.RepoURL)
		}
	}
	finished := metav1.Now()
	status.SourceHydrator.CurrentOperation = &v1alpha1.HydrateOperation{
		StartedAt: started, FinishedAt: &finished, Phase: v1alpha1.HydrateOperationPhaseHydrated,
		DrySHA: drySHA, HydratedSHA: commit.SHA, SourceHydrator: *sh.DeepCopy(),
	}
	status.SourceHydrator.LastSuccessfulOperation = &v1alpha1.SuccessfulHydrateOperation{
		DrySHA: drySHA, HydratedSHA: commit.SHA, SourceHydrator: *sh.DeepCopy(),
	}
	r.log.InfoContext(ctx, "hydrated", "app", app.Namespace+"/"+app.Name, "drySHA", drySHA, "hydratedSHA", commit.SHA, "pushed", commit.Pushed)
	return drySHA, nil
}

// dryCommit describes the dry commit for the hydrated files: its author,
// date and message when the repository server can read them, else its
// SHA alone (the files then still name it).
func (r *Reconciler) dryCommit(ctx context.Context, req manifests.Request, sha string) hydrator.DryCommit {
	dry := hydrator.DryCommit{RepoURL: req.Source.RepoURL, Path: req.Source.Path, SHA: sha}
	repo, err := r.manifests.Repository(ctx, req)
	if err != nil {
		return dry
	}
	commits, err := r.opts.Repo.ListCommits(ctx, repo, sha, 1)
	if err != nil || len(commits) == 0 {
		r.log.DebugContext(ctx, "dry commit metadata unavailable", "app", req.App.Namespace+"/"+req.App.Name, "err", err)
		return dry
	}
	c := commits[0]
	dry.Author, dry.Date, dry.Message = c.Author.Name+" <"+c.Author.Email+">", c.Date, c.Message
	return dry
}
