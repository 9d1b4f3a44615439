package manifests

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver"
)

// AppRequest is every source of an application to render: the
// controller's comparisons and syncs and the API's manifests query ask
// for an app's manifests through RenderApp, so a multi-source app renders
// the same for both.
type AppRequest struct {
	// App and Project are as in Request.
	App     *v1alpha1.Application
	Project *v1alpha1.AppProject
	// Sources are the sources to render: the app's, or a sync's.
	Sources []v1alpha1.ApplicationSource
	// Revisions are the revisions to render Sources at, by position; a
	// missing or "" entry is the source's targetRevision.
	Revisions []string
	// NoCache, KubeVersion and APIVersions are as in Request, for every
	// source.
	NoCache     bool
	KubeVersion string
	APIVersions []string
}

// AppResponse is the render of every source of an AppRequest, by position.
type AppResponse struct {
	// Sources holds each source's render; nil for a source that only
	// lends its files to the others (RefOnly).
	Sources []*reposerver.ManifestResponse
	// Revisions are the resolved revisions, ref-only sources' included.
	Revisions []string
}

// SourceError is the failure of the source at Index (from 0) of an
// AppRequest.
type SourceError struct {
	Index  int
	Source v1alpha1.ApplicationSource
	Err    error
}

// Error names the source, by position from 1, repository and path or
// chart, and says why it failed.
func (e *SourceError) Error() string {
	what := repourl.Redact(e.Source.RepoURL)
	switch {
	case e.Source.Chart != "":
		what += " chart " + e.Source.Chart
	case e.Source.Path != "":
		what += " path " + e.Source.Path
	}
	if e.Source.Name != "" {
		what = e.Source.Name + ", " + what
	}
	return fmt.Sprintf("source %d (%s): %v", e.Index+1, what, e.Err)
}

// Unwrap returns the cause.
func (e *SourceError) Unwrap() error { return e.Err }

// RefOnly reports whether a source only lends its files to the others (a
// ref and neither a path nor a chart): it is not rendered itself.
func RefOnly(src v1alpha1.ApplicationSource) bool {
	return src.Ref != "" && src.Path == "" && src.Chart == ""
}

// RenderApp renders every source of req with the project's rules (see
// Render). The revisions of the sources with a ref are resolved first, so
// that every source reading one ($ref/path value files) reads the same
// commit, the one the response reports; the other sources render
// concurrently. The first failure is returned as a *SourceError.
func (r *Renderer) RenderApp(ctx context.Context, req AppRequest) (*AppResponse, error) {
	n := len(req.Sources)
	out := &AppResponse{Sources: make([]*reposerver.ManifestResponse, n), Revisions: make([]string, n)}
	one := func(i int) Request {
		rr := Request{
			App: req.App, Project: req.Project, Source: req.Sources[i], NoCache: req.NoCache,
			KubeVersion: req.KubeVersion, APIVersions: req.APIVersions,
		}
		if i < len(req.Revisions) {
			rr.Revision = req.Revisions[i]
		}
		return rr
	}
	var refs []Ref
	for i, src := range req.Sources {
		if src.Ref == "" {
			continue
		}
		rev, err := r.ResolveRevision(ctx, one(i))
		if err != nil {
			return nil, &SourceError{Index: i, Source: src, Err: fmt.Errorf("resolving revision: %w", err)}
		}
		out.Revisions[i] = rev
		refs = append(refs, Ref{Source: src, Revision: rev})
	}
	g, gctx := errgroup.WithContext(ctx)
	for i, src := range req.Sources {
		if RefOnly(src) {
			continue
		}
		rr := one(i)
		rr.Refs = refs
		if src.Ref != "" {
			rr.Revision = out.Revisions[i]
		}
		g.Go(func() error {
			res, err := r.Render(gctx, rr)
			if err != nil {
				return &SourceError{Index: i, Source: src, Err: err}
			}
			out.Sources[i], out.Revisions[i] = res, res.Revision
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}
