package inproc

import (
	"context"
	"fmt"
	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/render/directory"
	"github.com/graphcd/graphcd/reposerver/render/helm"
	"github.com/graphcd/graphcd/reposerver/render/kustomize"
)

// renderJob is one render of a checked-out repository or a pulled chart by
// Helm, Kustomize or the directory renderer (with Jsonnet): everything a
// render worker process needs, so it crosses the process boundary as JSON.
type renderJob struct {
	Tool    v1alpha1.ApplicationSourceType `json:"tool"`
	Request render.Request                 `json:"request"`
	// ChartDir is a chart pulled from a Helm repository; empty for a
	// source in Git.
	ChartDir string `json:"chartDir,omitempty"`
	// ChartCacheDir caches the chart dependencies fetched by Helm.
	ChartCacheDir string `json:"chartCacheDir"`
	// HelmRepos are the credentials a chart's dependencies may use.
	HelmRepos []helmRepo `json:"helmRepos,omitempty"`
}

// helmRepo is a configured Helm repository and the part of its
// credentials that fetching a dependency chart uses.
type helmRepo struct {
	URL      string `json:"url"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	CACert   []byte `json:"caCert,omitempty"`
	Insecure bool   `json:"insecure,omitempty"`
}

// newJob describes the render of rreq by tool; chartDir is a pulled chart
// or "".
func (l *Local) newJob(tool v1alpha1.ApplicationSourceType, rreq render.Request, chartDir string, req reposerver.ManifestRequest) renderJob {
	job := renderJob{Tool: tool, Request: rreq, ChartDir: chartDir, ChartCacheDir: l.charts}
	if tool != v1alpha1.ApplicationSourceTypeHelm {
		return job
	}
	for _, r := range req.HelmRepos {
		if r.Credentials == nil {
			continue
		}
		c := r.Credentials
		job.HelmRepos = append(job.HelmRepos, helmRepo{URL: r.URL, Username: c.Username, Password: c.Password, CACert: c.CACert, Insecure: c.Insecure})
	}
	return job
}

// runJob renders job in a worker process when Options.Worker is set and
// the job evaluates code, else in this process.
func (l *Local) runJob(ctx context.Context, job renderJob) ([]*unstructured.Unstructured, error) {
	if l.workers != nil && !job.readsOnly(ctx) {
		return l.workers.run(ctx, job, l.opts.RenderTimeout)
	}
	return job.run(ctx)
}

// readsOnly reports whether job is a directory without Jsonnet: it reads
// YAML and JSON files within its Limits and evaluates nothing, so it
// needs no worker's memory budget, nor its start (a process every
// maxJobsPerWorker renders) and round trip.
func (job renderJob) readsOnly(ctx context.Context) bool {
	if job.Tool != v1alpha1.ApplicationSourceTypeDirectory {
		return false
	}
	jsonnet, err := directory.Jsonnet(ctx, job.Request)
	return err == nil && !jsonnet // an error: the worker reports it
}

// run renders the job in this process.
func (job renderJob) run(ctx context.Context) ([]*unstructured.Unstructured, error) {
	switch job.Tool {
	case v1alpha1.ApplicationSourceTypeHelm:
		return helm.Render(ctx, job.Request, helm.ChartSource{Dir: job.ChartDir, Dependencies: job.helmDependencies()})
	case v1alpha1.ApplicationSourceTypeKustomize:
		return kustomize.Render(ctx, job.Request)
	case v1alpha1.ApplicationSourceTypeDirectory:
		return directory.Render(ctx, job.Request)
	default:
		return nil, fmt.Errorf("source type %s cannot be rendered by a render job", job.Tool)
	}
}

// helmDependencies lets a chart's dependencies be fetched with the
// credentials of the configured Helm repository whose URL is the longest
// prefix of the dependency's.
func (job renderJob) helmDependencies() helm.Dependencies {
	repos := job.HelmRepos
	return helm.Dependencies{CacheDir: job.ChartCacheDir, Credentials: func(url string) *helm.Credentials {
		want := repourl.Normalize(url)
		var best *helmRepo
		bestLen := -1
		for i := range repos {
			prefix := repourl.Normalize(repos[i].URL)
			if strings.HasPrefix(want, prefix) && len(prefix) > bestLen {
				best, bestLen = &repos[i], len(prefix)
			}
		}
		if best == nil {
			return nil
		}
		return &helm.Credentials{Username: best.Username, Password: best.Password, CACert: best.CACert, Insecure: best.Insecure}
	}}
}
