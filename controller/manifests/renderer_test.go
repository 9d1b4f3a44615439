package manifests_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/reposerver"
)

// repoServer keeps the last request it was asked to render: what the
// rules hand to the repository server.
type repoServer struct{ got *reposerver.ManifestRequest }

func (s *repoServer) GenerateManifests(_ context.Context, req reposerver.ManifestRequest) (*reposerver.ManifestResponse, error) {
	s.got = &req
	return &reposerver.ManifestResponse{Revision: "abc"}, nil
}

func (s *repoServer) ResolveRevision(_ context.Context, _ reposerver.Repository, revision string) (string, error) {
	return "resolved-" + revision, nil
}

const (
	keyID       = "4AEE18F83AFDEB23"
	fingerprint = "0123456789ABCDEF01234567" + keyID
	armored     = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n...\n"
)

func TestRender(t *testing.T) {
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: "web"},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "team",
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"},
		},
	}
	proj := func(keys ...string) *v1alpha1.AppProject {
		p := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: "team"}}
		p.Spec.SourceRepos = []string{"https://git.example.com/*"}
		for _, k := range keys {
			p.Spec.SignatureKeys = append(p.Spec.SignatureKeys, v1alpha1.SignatureKey{KeyID: k})
		}
		return p
	}
	keysCM := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: manifests.GPGKeysConfigMap}, Data: data}
	}
	permitted := v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/web", Path: "app"}
	for _, tc := range []struct {
		name     string
		project  *v1alpha1.AppProject
		source   v1alpha1.ApplicationSource
		cms      []*corev1.ConfigMap
		creds    error
		wantKeys []string
		check    func(error) bool
		wantErr  string
	}{
		{name: "no signature required", project: proj(), source: permitted},
		{name: "key by ID", project: proj(keyID), source: permitted,
			cms: []*corev1.ConfigMap{keysCM(map[string]string{keyID: armored, "1111111111111111": "other"})}, wantKeys: []string{armored}},
		{name: "key by fingerprint", project: proj(keyID), source: permitted,
			cms: []*corev1.ConfigMap{keysCM(map[string]string{fingerprint: armored})}, wantKeys: []string{armored}},
		{name: "no public key", project: proj(keyID), source: permitted, check: manifests.SignatureRefused,
			wantErr: "project team requires commits signed by " + keyID + ": no public key to verify commit signatures with (add the public key to ConfigMap graphcd/graphcd-gpg-keys-cm)"},
		{name: "missing project", source: permitted,
			check:   func(err error) bool { var e *manifests.MissingProjectError; return errors.As(err, &e) },
			wantErr: "application references project team which does not exist"},
		{name: "repository not permitted", project: proj(), source: v1alpha1.ApplicationSource{RepoURL: "https://other.example.com/web"},
			check:   func(err error) bool { var e *project.DeniedError; return errors.As(err, &e) },
			wantErr: "application repo https://other.example.com/web is not permitted in project 'team'"},
		{name: "credentials unreadable", project: proj(), source: permitted, creds: errors.New("secret repo-1: no url"),
			check:   func(err error) bool { var e *manifests.LookupError; return errors.As(err, &e) },
			wantErr: "credentials of https://git.example.com/web: secret repo-1: no url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := corev1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			b := fake.NewClientBuilder().WithScheme(scheme)
			for _, cm := range tc.cms {
				b = b.WithObjects(cm)
			}
			repo := &repoServer{}
			r := &manifests.Renderer{Repo: repo, Keys: b.Build(), Credentials: func(_ context.Context, url, _ string) (reposerver.Repository, error) {
				return reposerver.Repository{URL: url}, tc.creds
			}}
			_, err := r.Render(t.Context(), manifests.Request{App: app, Project: tc.project, Source: tc.source, Revision: "main"})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || !tc.check(err) {
					t.Fatalf("error %v, want %q of its type", err, tc.wantErr)
				}
				if repo.got != nil {
					t.Errorf("the repository server was asked to render %+v", repo.got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := &reposerver.ManifestRequest{
				Repo: reposerver.Repository{URL: tc.source.RepoURL}, Source: tc.source, Revision: "main",
				AppName: "web", Project: "team", Namespace: "web", SignatureKeys: tc.wantKeys,
			}
			if diff := cmp.Diff(repo.got, want); diff != "" {
				t.Errorf("request to the repository server (-got +want):\n%s", diff)
			}
		})
	}
}

// The refs of a multi-source app reach the repository server keyed as
// value files name them, each with the credentials its own repository
// has for the project; a ref the project does not permit stops the render.
func TestRenderRefs(t *testing.T) {
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: "web"},
		Spec:       v1alpha1.ApplicationSpec{Project: "team", Destination: v1alpha1.ApplicationDestination{Namespace: "web"}},
	}
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: "team"}}
	proj.Spec.SourceRepos = []string{"https://git.example.com/*", "https://charts.example.com"}
	creds := func(_ context.Context, url, project string) (reposerver.Repository, error) {
		return reposerver.Repository{URL: url, Credentials: &reposerver.Credentials{Username: project, Password: "pw-of-" + url}}, nil
	}
	repo := &repoServer{}
	r := &manifests.Renderer{Repo: repo, Credentials: creds}
	chart := v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.2.3"}
	values := v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/values", TargetRevision: "main", Ref: "values"}
	if _, err := r.Render(t.Context(), manifests.Request{App: app, Project: proj, Source: chart, Refs: []manifests.Ref{{Source: values, Revision: "0123abc"}}}); err != nil {
		t.Fatal(err)
	}
	want := map[string]reposerver.RefSource{"$values": {
		Repo:           reposerver.Repository{URL: values.RepoURL, Credentials: &reposerver.Credentials{Username: "team", Password: "pw-of-" + values.RepoURL}},
		TargetRevision: "0123abc",
	}}
	if diff := cmp.Diff(repo.got.RefSources, want); diff != "" {
		t.Errorf("ref sources (-got +want):\n%s", diff)
	}
	if repo.got.Repo.Credentials.Password != "pw-of-"+chart.RepoURL {
		t.Errorf("the chart's repository got credentials %v", repo.got.Repo.Credentials)
	}

	repo.got = nil
	denied := v1alpha1.ApplicationSource{RepoURL: "https://evil.example.com/values", Ref: "values"}
	_, err := r.Render(t.Context(), manifests.Request{App: app, Project: proj, Source: chart, Refs: []manifests.Ref{{Source: denied}}})
	var de *project.DeniedError
	if !errors.As(err, &de) || repo.got != nil {
		t.Errorf("ref in a repository the project refuses: err = %v, rendered %v", err, repo.got != nil)
	}

	rev, err := r.ResolveRevision(t.Context(), manifests.Request{App: app, Project: proj, Source: values})
	if err != nil || rev != "resolved-main" {
		t.Errorf("ResolveRevision = %q, %v", rev, err)
	}
	if _, err := r.ResolveRevision(t.Context(), manifests.Request{App: app, Project: proj, Source: denied}); !errors.As(err, &de) {
		t.Errorf("ResolveRevision of a refused repository: err = %v", err)
	}
}

// recordingRepo renders every source as one request it records, and
// resolves revisions by naming them; safe for RenderApp's goroutines.
type recordingRepo struct {
	mu  sync.Mutex
	got map[string]reposerver.ManifestRequest // by repository URL
}

func (s *recordingRepo) GenerateManifests(_ context.Context, req reposerver.ManifestRequest) (*reposerver.ManifestResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.got == nil {
		s.got = map[string]reposerver.ManifestRequest{}
	}
	s.got[req.Repo.URL] = req
	if strings.Contains(req.Repo.URL, "broken") {
		return nil, errors.New("no such path")
	}
	return &reposerver.ManifestResponse{Revision: "rendered-" + req.Revision}, nil
}

func (s *recordingRepo) ResolveRevision(_ context.Context, _ reposerver.Repository, revision string) (string, error) {
	return "resolved-" + revision, nil
}

// RenderApp resolves each ref once, hands every rendered source the refs
// at those revisions, renders nothing of a ref-only source, reports every
// revision by position, and names the source that failed.
func TestRenderApp(t *testing.T) {
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: "web"},
		Spec:       v1alpha1.ApplicationSpec{Project: "team", Destination: v1alpha1.ApplicationDestination{Namespace: "web"}},
	}
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: "team"}}
	proj.Spec.SourceRepos = []string{"*"}
	repo := &recordingRepo{}
	r := &manifests.Renderer{Repo: repo}
	sources := []v1alpha1.ApplicationSource{
		{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.0.0"},
		{RepoURL: "https://git.example.com/values", TargetRevision: "main", Ref: "values"},
		{RepoURL: "https://git.example.com/extra", Path: "extra", TargetRevision: "main", Ref: "extra"},
	}
	res, err := r.RenderApp(t.Context(), manifests.AppRequest{App: app, Project: proj, Sources: sources, Revisions: []string{"", "v2"}, KubeVersion: "v1.37.2"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"rendered-", "resolved-v2", "rendered-resolved-main"}; !slices.Equal(res.Revisions, want) {
		t.Errorf("revisions %v, want %v", res.Revisions, want)
	}
	if res.Sources[0] == nil || res.Sources[1] != nil || res.Sources[2] == nil || len(repo.got) != 2 {
		t.Errorf("rendered %v (requests %d), want the chart and the extra path, not the ref-only source", res.Sources, len(repo.got))
	}
	chart := repo.got["https://charts.example.com"]
	wantRefs := map[string]string{"$values": "resolved-v2", "$extra": "resolved-main"}
	for ref, rev := range wantRefs {
		if chart.RefSources[ref].TargetRevision != rev {
			t.Errorf("chart's ref %s at %q, want %q", ref, chart.RefSources[ref].TargetRevision, rev)
		}
	}
	if chart.KubeVersion != "v1.37.2" || repo.got["https://git.example.com/extra"].Revision != "resolved-main" {
		t.Errorf("requests %+v", repo.got)
	}

	sources = append(sources, v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/broken", Path: "app", Name: "broken-one"})
	_, err = r.RenderApp(t.Context(), manifests.AppRequest{App: app, Project: proj, Sources: sources})
	var se *manifests.SourceError
	if !errors.As(err, &se) || se.Index != 3 || err.Error() != "source 4 (broken-one, https://git.example.com/broken path app): no such path" {
		t.Errorf("err = %v, want source 4 named", err)
	}
}

// basesRepo answers like a repository server whose source has remote
// bases in the repositories needs: it names those the request lacks.
type basesRepo struct {
	needs []string
	calls int
	last  []string // the repositories of the last request
}

func (s *basesRepo) GenerateManifests(_ context.Context, req reposerver.ManifestRequest) (*reposerver.ManifestResponse, error) {
	s.calls++
	s.last = nil
	for _, r := range req.Repos {
		s.last = append(s.last, r.URL+" as "+r.Credentials.Username)
	}
	var missing []string
	for _, u := range s.needs {
		if !slices.ContainsFunc(req.Repos, func(r reposerver.Repository) bool { return r.URL == u }) {
			missing = append(missing, u)
		}
	}
	if len(missing) > 0 {
		return nil, &reposerver.RepositoriesNeededError{URLs: missing}
	}
	return &reposerver.ManifestResponse{Revision: "abc"}, nil
}

func (s *basesRepo) ResolveRevision(_ context.Context, _ reposerver.Repository, revision string) (string, error) {
	return revision, nil
}

// The repositories remote bases need are asked for again with the
// credentials of each, once the project permits them, and remembered for
// the next render; one the project refuses fails the render naming it,
// and a remembered one the kustomization no longer needs is dropped
// quietly when the project stops permitting it.
func TestRenderRemoteBaseRepositories(t *testing.T) {
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: "web"},
		Spec:       v1alpha1.ApplicationSpec{Project: "team", Destination: v1alpha1.ApplicationDestination{Namespace: "web"}},
	}
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: "team", Generation: 1}}
	proj.Spec.SourceRepos = []string{"https://git.example.com/*"}
	creds := func(_ context.Context, url, project string) (reposerver.Repository, error) {
		return reposerver.Repository{URL: url, Credentials: &reposerver.Credentials{Username: project + "@" + strings.TrimPrefix(url, "https://git.example.com/")}}, nil
	}
	repo := &basesRepo{needs: []string{"https://git.example.com/bases"}}
	r := &manifests.Renderer{Repo: repo, Credentials: creds}
	overlay := v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/overlay", Path: "prod"}
	render := func() error {
		_, err := r.Render(t.Context(), manifests.Request{App: app, Project: proj, Source: overlay})
		return err
	}
	if err := render(); err != nil || repo.calls != 2 || !slices.Equal(repo.last, []string{"https://git.example.com/bases as team@bases"}) {
		t.Fatalf("first render: err %v after %d calls, repositories %v", err, repo.calls, repo.last)
	}
	if err := render(); err != nil || repo.calls != 3 {
		t.Errorf("second render: err %v, %d calls in all; want one more, with the remembered repository", err, repo.calls)
	}

	// The kustomization moves to bases the project refuses.
	repo.needs = []string{"https://evil.example.com/bases"}
	var de *project.DeniedError
	if err := render(); !errors.As(err, &de) || !strings.Contains(err.Error(), "remote base: application repo https://evil.example.com/bases is not permitted") {
		t.Errorf("a base the project refuses: err = %v", err)
	}

	// The old bases are no longer needed, and no longer permitted.
	repo.needs = nil
	proj = proj.DeepCopy()
	proj.Generation = 2
	proj.Spec.SourceRepos = []string{"https://git.example.com/overlay"}
	if err := render(); err != nil || len(repo.last) != 0 {
		t.Errorf("a remembered repository the project stopped permitting: err %v, repositories sent %v", err, repo.last)
	}
}
