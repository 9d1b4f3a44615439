package inproc

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/cache"
	"github.com/graphcd/graphcd/reposerver/render"
)

// The manifest cache's side of a render: what keys it, and how a
// render goes in and out of it.

// cacheKey holds everything that determines a render.
type cacheKey struct {
	Repo        string
	Revision    string
	Source      v1alpha1.ApplicationSource
	AppName     string
	Project     string
	Namespace   string
	KubeVersion string
	APIVersions []string
	Limits      render.Limits
	// SignatureKeys is part of the key so that manifests rendered without
	// verification never answer a request that demands it.
	SignatureKeys []string
	// Refs are the sources value files are read from, each at its
	// resolved revision.
	Refs map[string]refKey `json:",omitempty"`
	// Tools decide what may be fetched (remote value files).
	Tools reposerver.ToolOptions
	// Repos are the repositories remote bases may come from, each with
	// a digest of its credentials: a caller without the credentials
	// never gets a render made with them.
	Repos []repoKey `json:",omitempty"`
}

// lineage names the renders of k's source at every revision (of its
// repository and of its ref sources), which the manifest cache keeps only
// the latest of; "" when it cannot be named.
func (k cacheKey) lineage() string {
	k.Revision = ""
	refs := make(map[string]refKey, len(k.Refs))
	for name, r := range k.Refs {
		r.Revision = ""
		refs[name] = r
	}
	k.Refs = refs
	lineage, err := cache.KeyOf(k)
	if err != nil {
		return ""
	}
	return lineage
}

// repoKey identifies an entry of ManifestRequest.Repos in a cacheKey.
type repoKey struct {
	URL         string
	Credentials string `json:",omitempty"`
}

// repoKeys returns the cache key entries of repos.
func repoKeys(repos []reposerver.Repository) ([]repoKey, error) {
	var out []repoKey
	for _, r := range repos {
		k := repoKey{URL: repourl.Normalize(r.URL)}
		if r.Credentials != nil {
			digest, err := cache.KeyOf(r.Credentials)
			if err != nil {
				return nil, err
			}
			k.Credentials = digest
		}
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b repoKey) int { return strings.Compare(a.URL+a.Credentials, b.URL+b.Credentials) })
	return out, nil
}

// refKey identifies a ref source's content in a cacheKey.
type refKey struct {
	Repo     string
	Revision string
}

// cacheable reports whether a cached render may be reused: a chart version
// range may match a newer chart at any time, so only exact versions are.
// Commits and artifact digests never change.
func cacheable(req reposerver.ManifestRequest, revision string) bool {
	return !isChart(req) || (revision != "" && !strings.ContainsAny(revision, "^~*<>=|, xX"))
}

// fromCache returns a cached render (or cached failure).
func (l *Local) fromCache(ctx context.Context, key string) (*reposerver.ManifestResponse, bool, error) {
	if l.opts.Cache == nil {
		return nil, false, nil
	}
	e, ok := l.opts.Cache.Get(ctx, key)
	if !ok {
		return nil, false, nil
	}
	if e.Error != "" {
		return nil, true, errors.New(e.Error)
	}
	objs, err := objectsFromJSON(e.Manifests)
	if err != nil {
		l.log.WarnContext(ctx, "unreadable cached manifests; rendering again", "err", err)
		return nil, false, nil
	}
	return &reposerver.ManifestResponse{Manifests: objs, Revision: e.Revision, SourceType: v1alpha1.ApplicationSourceType(e.SourceType), Cached: true}, true, nil
}

// objectsFromJSON reads a JSON array of objects, keeping integers as int64
// as unstructured objects need.
func objectsFromJSON(b []byte) ([]*unstructured.Unstructured, error) {
	var objs []any
	if len(b) > 0 {
		if err := utiljson.Unmarshal(b, &objs); err != nil {
			return nil, err
		}
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		m, ok := o.(map[string]any)
		if !ok {
			return nil, errors.New("a manifest is not an object")
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}

// objectsToJSON writes objs as a JSON array.
func objectsToJSON(objs []*unstructured.Unstructured) ([]byte, error) {
	list := make([]map[string]any, len(objs))
	for i, m := range objs {
		list[i] = m.Object
	}
	return json.Marshal(list)
}

func (l *Local) toCache(ctx context.Context, key, lineage string, res *reposerver.ManifestResponse, renderErr error) {
	var needed *reposerver.RepositoriesNeededError
	if l.opts.Cache == nil || errors.Is(renderErr, context.Canceled) || errors.Is(renderErr, context.DeadlineExceeded) || errors.As(renderErr, &needed) {
		return
	}
	e := cache.Entry{Lineage: lineage}
	if renderErr != nil {
		e.Error = renderErr.Error()
	} else {
		e.Revision, e.SourceType = res.Revision, string(res.SourceType)
		b, err := objectsToJSON(res.Manifests)
		if err != nil {
			return
		}
		e.Manifests = b
	}
	if err := l.opts.Cache.Set(ctx, key, e); err != nil {
		l.log.WarnContext(ctx, "manifest cache write failed", "err", err)
	}
}

// render checks out (or pulls) the source and renders it within the render
// timeout: Helm, Kustomize and directory sources through runJob (in a
