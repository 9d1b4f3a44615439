package kustomize

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
)

// The names and hash suffixes below are what `kustomize build` (v5.8.1)
// prints for the same fixtures.
func TestRenderOverlay(t *testing.T) {
	root := checkout(t)
	objs, err := renderApp(t, root, "overlays/prod", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := []string{
		"ConfigMap/prod/prod-app-config-gg788h82kf",
		"ConfigMap/prod/prod-monitoring",
		"Secret/prod/prod-app-secret-bb2mc4486b",
		"Service/prod/prod-web",
		"Deployment/prod/prod-web",
	}
	if diff := cmp.Diff(ids(objs), wantIDs); diff != "" {
		t.Errorf("objects (-got +want):\n%s", diff)
	}
	dep := find(t, objs, "Deployment", "prod-web")
	got := map[string]string{}
	for _, f := range []string{
		"spec.replicas",
		"metadata.labels",
		"metadata.annotations",
		"spec.selector.matchLabels",
		"spec.template.metadata.annotations",
		"spec.template.spec.containers[0].envFrom[0].configMapRef.name",
		"spec.template.spec.volumes[0].secret.secretName",
		"spec.template.spec.containers[1].image",
	} {
		got[f] = fieldOf(dep, f)
	}
	want := map[string]string{
		"spec.replicas":                      "2",
		"metadata.labels":                    "app=web,env=prod,tier=frontend",
		"metadata.annotations":               "owner=team-a",
		"spec.selector.matchLabels":          "app=web,component=web,env=prod",
		"spec.template.metadata.annotations": "owner=team-a,prometheus.io/scrape=true",
		"spec.template.spec.containers[0].envFrom[0].configMapRef.name": "prod-app-config-gg788h82kf",
		"spec.template.spec.volumes[0].secret.secretName":               "prod-app-secret-bb2mc4486b",
		"spec.template.spec.containers[1].image":                        "redis:7.0",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("deployment (-got +want):\n%s", diff)
	}
	cm := find(t, objs, "ConfigMap", "prod-app-config")
	if diff := cmp.Diff(fieldOf(cm, "data.LOG_LEVEL"), "warn"); diff != "" {
		t.Errorf("merged configMapGenerator literal (-got +want):\n%s", diff)
	}
}

const digest = "sha256:24a0c4b4a4c0eb97a1aabb8e29f18e917d05abfe1b7a7c07857230879ce7d3d3"

func TestOverrides(t *testing.T) {
	root := checkout(t)
	tests := []struct {
		name    string
		path    string
		opts    *v1alpha1.ApplicationSourceKustomize
		wantErr error  // matched with errors.Is
		errText string // or contained in the message
		check   map[string]map[string]string
	}{
		{
			name: "namePrefix replaces the overlay's and follows references",
			path: "overlays/prod",
			opts: &v1alpha1.ApplicationSourceKustomize{NamePrefix: "stage-"},
			check: map[string]map[string]string{"Deployment/stage-web": {
				"metadata.name": "stage-web",
				"spec.template.spec.containers[0].envFrom[0].configMapRef.name": "stage-app-config-gg788h82kf",
				"spec.template.spec.volumes[0].secret.secretName":               "stage-app-secret-bb2mc4486b",
			}},
		},
		{
			name: "nameSuffix goes before the hash",
			path: "overlays/prod",
			opts: &v1alpha1.ApplicationSourceKustomize{NameSuffix: "-v2"},
			check: map[string]map[string]string{"Deployment/prod-web-v2": {
				"spec.template.spec.containers[0].envFrom[0].configMapRef.name": "prod-app-config-v2-gg788h82kf",
			}},
		},
		{
			name: "images in every override form",
			path: "base",
			opts: &v1alpha1.ApplicationSourceKustomize{Images: []string{
				"nginx=registry.example.com/nginx:1.27", // name=newName:tag
				"redis:7.2",                             // name:tag, replaces the kustomization's redis entry
				"busybox@" + digest,                     // name@digest
				"alpine=quay.io/alpine",                 // name=newName keeps the tag
			}},
			check: map[string]map[string]string{"Deployment/web": {
				"spec.template.spec.containers[0].image":     "registry.example.com/nginx:1.27",
				"spec.template.spec.containers[1].image":     "redis:7.2",
				"spec.template.spec.containers[2].image":     "quay.io/alpine:3.19",
				"spec.template.spec.initContainers[0].image": "busybox@" + digest,
			}},
		},
		{
			name: "images may use the app's environment",
			path: "overlays/plain",
			opts: &v1alpha1.ApplicationSourceKustomize{Images: []string{"nginx=registry.example.com/${ARGOCD_APP_NAME}:1"}},
			check: map[string]map[string]string{"Deployment/web": {
				"spec.template.spec.containers[0].image": "registry.example.com/guestbook:1",
			}},
		},
		{
			name: "replicas win over the overlay's patch",
			path: "overlays/prod",
			opts: &v1alpha1.ApplicationSourceKustomize{Replicas: []v1alpha1.KustomizeReplica{{Name: "web", Count: intstr.FromInt32(5)}}},
			check: map[string]map[string]string{"Deployment/prod-web": {
				"spec.replicas": "5",
			}},
		},
		{
			name: "replicas count as a string",
			path: "overlays/plain",
			opts: &v1alpha1.ApplicationSourceKustomize{Replicas: []v1alpha1.KustomizeReplica{{Name: "web", Count: intstr.FromString("4")}}},
			check: map[string]map[string]string{"Deployment/web": {
				"spec.replicas": "4",
			}},
		},
		{
			name:    "replicas count not a number",
			path:    "overlays/plain",
			opts:    &v1alpha1.ApplicationSourceKustomize{Replicas: []v1alpha1.KustomizeReplica{{Name: "web", Count: intstr.FromString("many")}}},
			errText: `count "many" is not a number`,
		},
		{
			name: "namespace replaces the overlay's",
			path: "overlays/prod",
			opts: &v1alpha1.ApplicationSourceKustomize{Namespace: "staging"},
			check: map[string]map[string]string{
				"Deployment/prod-web": {"metadata.namespace": "staging"},
				"Service/prod-web":    {"metadata.namespace": "staging"},
			},
		},
		{
			name:    "namespace must be a DNS label",
			path:    "overlays/plain",
			opts:    &v1alpha1.ApplicationSourceKustomize{Namespace: "Not_A_Namespace"},
			errText: "invalid override: namespace",
		},
		{
			name: "commonLabels reach selectors",
			path: "overlays/plain",
			opts: &v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"team": "a", "app-name": "${ARGOCD_APP_NAME}"}},
			check: map[string]map[string]string{
				"Deployment/web": {
					"metadata.labels":           "app=web,app-name=guestbook,team=a,tier=frontend",
					"spec.selector.matchLabels": "app=web,app-name=guestbook,component=web,team=a",
				},
				"Service/web": {"spec.selector": "app=web,app-name=guestbook,component=web,team=a"},
			},
		},
		{
			name: "labelWithoutSelector leaves selectors alone",
			path: "overlays/plain",
			opts: &v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"team": "a"}, LabelWithoutSelector: true},
			check: map[string]map[string]string{
				"Deployment/web": {
					"metadata.labels":               "app=web,team=a,tier=frontend",
					"spec.selector.matchLabels":     "app=web,component=web",
					"spec.template.metadata.labels": "app=web,component=web",
				},
				"Service/web": {"spec.selector": "app=web,component=web"},
			},
		},
		{
			name:    "commonLabels conflict without force",
			path:    "overlays/prod",
			opts:    &v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"env": "staging"}},
			wantErr: ErrConflict,
		},
		{
			name: "commonLabels conflict with force",
			path: "overlays/prod",
			opts: &v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"env": "staging"}, ForceCommonLabels: true},
			check: map[string]map[string]string{"Deployment/prod-web": {
				"metadata.labels":           "app=web,env=staging,tier=frontend",
				"spec.selector.matchLabels": "app=web,component=web,env=staging",
			}},
		},
		{
			name: "a label only a base sets is no conflict",
			path: "overlays/prod",
			opts: &v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"app": "shop"}},
			check: map[string]map[string]string{"Deployment/prod-web": {
				"metadata.labels": "app=shop,env=prod,tier=frontend",
			}},
		},
		{
			name:    "commonAnnotations conflict without force",
			path:    "overlays/prod",
			opts:    &v1alpha1.ApplicationSourceKustomize{CommonAnnotations: map[string]string{"owner": "team-b"}},
			wantErr: ErrConflict,
		},
		{
			name: "commonAnnotations with force and envsubst",
			path: "overlays/prod",
			opts: &v1alpha1.ApplicationSourceKustomize{
				CommonAnnotations:         map[string]string{"owner": "team-b", "app": "${ARGOCD_APP_NAME}/$ARGOCD_APP_NAMESPACE", "price": "$$5"},
				ForceCommonAnnotations:    true,
				CommonAnnotationsEnvsubst: true,
			},
			check: map[string]map[string]string{"Deployment/prod-web": {
				"metadata.annotations": "app=guestbook/apps,owner=team-b,price=$5",
			}},
		},
		{
			name: "commonAnnotations without envsubst stay literal",
			path: "overlays/plain",
			opts: &v1alpha1.ApplicationSourceKustomize{CommonAnnotations: map[string]string{"app": "${ARGOCD_APP_NAME}"}},
			check: map[string]map[string]string{"Service/web": {
				"metadata.annotations": "app=${ARGOCD_APP_NAME}",
			}},
		},
		{
			name: "components are added",
			path: "overlays/prod",
			opts: &v1alpha1.ApplicationSourceKustomize{Components: []string{"../../components/debug", "../../components/monitoring"}},
			check: map[string]map[string]string{"Deployment/prod-web": {
				"spec.template.spec.containers[0].env[0].name":  "DEBUG",
				"spec.template.spec.containers[0].env[0].value": "1",
				"spec.template.metadata.annotations":            "owner=team-a,prometheus.io/scrape=true",
			}},
		},
		{
			name:    "a missing component is an error",
			path:    "overlays/plain",
			opts:    &v1alpha1.ApplicationSourceKustomize{Components: []string{"../../components/nope"}},
			errText: `component "../../components/nope" not found`,
		},
		{
			name: "a missing component may be ignored",
			path: "overlays/plain",
			opts: &v1alpha1.ApplicationSourceKustomize{Components: []string{"../../components/nope", "../../components/debug"}, IgnoreMissingComponents: true},
			check: map[string]map[string]string{"Deployment/web": {
				"spec.template.spec.containers[0].env[0].name": "DEBUG",
			}},
		},
		{
			name: "inline patches with and without target",
			path: "overlays/prod",
			opts: &v1alpha1.ApplicationSourceKustomize{Patches: []v1alpha1.KustomizePatch{
				{
					Target: &v1alpha1.KustomizeSelector{Kind: "Deployment", Name: "web"},
					Patch:  "- op: replace\n  path: /spec/template/spec/containers/0/name\n  value: main\n",
				},
				{
					Patch: "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  type: NodePort\n",
				},
			}},
			check: map[string]map[string]string{
				"Deployment/prod-web": {"spec.template.spec.containers[0].name": "main", "spec.replicas": "2"},
				"Service/prod-web":    {"spec.type": "NodePort"},
			},
		},
		{
			name: "patch from a file of the repository",
			path: "overlays/plain",
			opts: &v1alpha1.ApplicationSourceKustomize{Patches: []v1alpha1.KustomizePatch{{Path: "../prod/replicas.yaml"}}},
			check: map[string]map[string]string{"Deployment/web": {
				"spec.replicas": "2",
			}},
		},
		{
			name:    "an image override needs a tag, digest or new name",
			path:    "overlays/plain",
			opts:    &v1alpha1.ApplicationSourceKustomize{Images: []string{"nginx"}},
			errText: `invalid image override "nginx"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := renderApp(t, root, tt.path, tt.opts)
			switch {
			case tt.wantErr != nil || tt.errText != "":
				if err == nil {
					t.Fatalf("want an error, got %v", ids(objs))
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %q does not wrap %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("error %q does not contain %q", err, tt.errText)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			for id, fields := range tt.check {
				kind, name, _ := strings.Cut(id, "/")
				o := findExact(t, objs, kind, name)
				got := map[string]string{}
				for f := range fields {
					got[f] = fieldOf(o, f)
				}
				if diff := cmp.Diff(got, fields); diff != "" {
					t.Errorf("%s (-got +want):\n%s", id, diff)
				}
			}
		})
	}
}

// findExact returns the object of kind named name.
func findExact(t testing.TB, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s/%s among %v", kind, name, ids(objs))
	return nil
}

func TestParseImage(t *testing.T) {
	tests := []struct {
		arg     string
		want    types.Image
		wantErr bool
	}{
		{arg: "nginx=registry.example.com/nginx:1.27", want: types.Image{Name: "nginx", NewName: "registry.example.com/nginx", NewTag: "1.27"}},
		{arg: "nginx:1.27", want: types.Image{Name: "nginx", NewTag: "1.27"}},
		{arg: "nginx@" + digest, want: types.Image{Name: "nginx", Digest: digest}},
		{arg: "nginx=mirror/nginx", want: types.Image{Name: "nginx", NewName: "mirror/nginx"}},
		{arg: "nginx=mirror/nginx:1.27@" + digest, want: types.Image{Name: "nginx", NewName: "mirror/nginx", NewTag: "1.27", Digest: digest}},
		{arg: "registry.example.com:5000/team/app:v1", want: types.Image{Name: "registry.example.com:5000/team/app", NewTag: "v1"}},
		{arg: "nginx=*:1.28", want: types.Image{Name: "nginx", NewName: "*", NewTag: "1.28"}},
		{arg: "nginx", wantErr: true},
		{arg: "=nginx:1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			got, err := parseImage(tt.arg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestMergeImagesPreserve(t *testing.T) {
	existing := []types.Image{{Name: "redis", NewName: "mirror/redis", NewTag: "7.0"}, {Name: "app", NewTag: "1"}}
	got := mergeImages(existing, []types.Image{{Name: "redis", NewName: "*", NewTag: "7.2"}, {Name: "nginx", NewTag: "1.27"}})
	want := []types.Image{
		{Name: "app", NewTag: "1"},
		{Name: "nginx", NewTag: "1.27"},
		{Name: "redis", NewName: "mirror/redis", NewTag: "7.2"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

func TestCheckoutUntouched(t *testing.T) {
	root := checkout(t)
	before := treeHash(t, root)
	opts := &v1alpha1.ApplicationSourceKustomize{
		NamePrefix:        "stage-",
		Images:            []string{"nginx:1.27"},
		CommonLabels:      map[string]string{"team": "a"},
		CommonAnnotations: map[string]string{"owner": "b"}, ForceCommonAnnotations: true,
		Namespace:  "staging",
		Replicas:   []v1alpha1.KustomizeReplica{{Name: "web", Count: intstr.FromInt32(3)}},
		Components: []string{"../../components/debug"},
		Patches:    []v1alpha1.KustomizePatch{{Patch: "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  type: NodePort\n"}},
	}
	if _, err := renderApp(t, root, "overlays/prod", opts); err != nil {
		t.Fatal(err)
	}
	if after := treeHash(t, root); after != before {
		t.Errorf("the checkout changed during the render")
	}
	// A second render without overrides sees the kustomization as committed.
	objs, err := renderApp(t, root, "overlays/prod", nil)
	if err != nil {
		t.Fatal(err)
	}
	findExact(t, objs, "Deployment", "prod-web")
}

func TestRenderConcurrent(t *testing.T) {
	root := checkout(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			// Every third render sets its own OpenAPI schema and so runs alone.
			path, want := "overlays/prod", 5
			if i%3 == 0 {
				path, want = "overlays/openapi", 4
			}
			opts := &v1alpha1.ApplicationSourceKustomize{NamePrefix: "p" + string(rune('a'+i)) + "-"}
			objs, err := renderApp(t, root, path, opts)
			if err == nil && len(objs) != want {
				err = fmt.Errorf("%s: %d objects, want %d", path, len(objs), want)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestRenderContextCanceled(t *testing.T) {
	root := checkout(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Render(ctx, render.Request{RepoRoot: root, Path: "overlays/prod"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestRenderLimits(t *testing.T) {
	root := checkout(t)
	_, err := Render(t.Context(), render.Request{RepoRoot: root, Path: "overlays/prod", Limits: render.Limits{MaxManifestSize: 100}})
	if !errors.Is(err, render.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	// A file larger than the combined limit is not even read whole.
	_, err = Render(t.Context(), render.Request{RepoRoot: root, Path: "overlays/prod", Limits: render.Limits{MaxCombinedSize: 200}})
	if !errors.Is(err, render.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestRenderNotAKustomization(t *testing.T) {
	root := checkout(t)
	_, err := renderApp(t, root, "base/config", nil)
	if err == nil || !strings.Contains(err.Error(), "no kustomization file") {
		t.Fatalf("err = %v, want no kustomization file", err)
	}
}

func BenchmarkRender(b *testing.B) {
	root := checkout(b)
	opts := &v1alpha1.ApplicationSourceKustomize{
		NamePrefix:   "stage-",
		Images:       []string{"nginx=registry.example.com/nginx:1.27"},
		CommonLabels: map[string]string{"team": "a"},
		Replicas:     []v1alpha1.KustomizeReplica{{Name: "web", Count: intstr.FromInt32(3)}},
		Components:   []string{"../../components/debug"},
	}
	req := render.Request{
		RepoRoot: root,
		Path:     "overlays/prod",
		Source:   v1alpha1.ApplicationSource{Path: "overlays/prod", Kustomize: opts},
	}
	for b.Loop() {
		if _, err := Render(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}
