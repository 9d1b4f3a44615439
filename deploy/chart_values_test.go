package deploy_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// rendered is a chart render, looked up by kind and name.
type rendered []*unstructured.Unstructured

// get returns the object kind/name, failing the test if there is none.
func (r rendered) get(t *testing.T, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range r {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s/%s rendered", kind, name)
	return nil
}

// has reports whether kind/name was rendered.
func (r rendered) has(kind, name string) bool {
	return slices.ContainsFunc(r, func(o *unstructured.Unstructured) bool {
		return o.GetKind() == kind && o.GetName() == name
	})
}

// pod returns the Pod template of workload kind/name.
func (r rendered) pod(t *testing.T, kind, name string) corev1.PodTemplateSpec {
	t.Helper()
	m, _, err := unstructured.NestedMap(r.get(t, kind, name).Object, "spec", "template")
	if err != nil {
		t.Fatal(err)
	}
	var tmpl corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &tmpl); err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// container returns the first container of workload kind/name.
func (r rendered) container(t *testing.T, kind, name string) corev1.Container {
	t.Helper()
	return r.pod(t, kind, name).Spec.Containers[0]
}

// field returns a string field of kind/name.
func (r rendered) field(t *testing.T, kind, name string, path ...string) string {
	t.Helper()
	v, _, err := unstructured.NestedString(r.get(t, kind, name).Object, path...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func envValueFrom(c corev1.Container, name string) *corev1.EnvVarSource {
	for _, e := range c.Env {
		if e.Name == name {
			return e.ValueFrom
		}
	}
	return nil
}

var ha = map[string]any{"enabled": true}

// The workloads running the graphcd image with ha.enabled.
var haWorkloads = [][2]string{
	{"Deployment", "graphcd-server"},
	{"StatefulSet", "graphcd-controller"},
	{"Deployment", "graphcd-repo-server"},
	{"Job", "graphcd-secret-init"},
}

// TestChartValues renders the chart with each value the chart offers and
// checks the objects it changes.
func TestChartValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		values map[string]any
		check  func(t *testing.T, r rendered)
	}{{
		name: "dex and settings",
		values: map[string]any{
			"dex":     map[string]any{"config": "connectors: []\nenablePasswordDB: true\n"},
			"configs": map[string]any{"cm": map[string]any{"url": "https://cd.example.com"}, "rbac": map[string]any{"policy.default": "role:readonly"}},
		},
		check: func(t *testing.T, r rendered) {
			cm, _, _ := unstructured.NestedStringMap(r.get(t, "ConfigMap", "graphcd-cm").Object, "data")
			want := map[string]string{"url": "https://cd.example.com", "dex.config": "connectors: []\nenablePasswordDB: true\n"}
			if diff := cmp.Diff(cm, want); diff != "" {
				t.Errorf("graphcd-cm data (-got +want):\n%s", diff)
			}
			if got := r.field(t, "ConfigMap", "graphcd-rbac-cm", "data", "policy.default"); got != "role:readonly" {
				t.Errorf("graphcd-rbac-cm policy.default = %q", got)
			}
		},
	}, {
		name: "ingress to the HTTPS port",
		values: map[string]any{"ingress": map[string]any{
			"enabled": true, "className": "nginx", "hosts": []any{"cd.example.com"},
			"annotations": map[string]any{"nginx.ingress.kubernetes.io/backend-protocol": "HTTPS"},
			"tls":         []any{map[string]any{"secretName": "cd-tls", "hosts": []any{"cd.example.com"}}},
		}},
		check: func(t *testing.T, r rendered) {
			ing := r.get(t, "Ingress", "graphcd-server").Object
			want := map[string]any{
				"ingressClassName": "nginx",
				"tls":              []any{map[string]any{"secretName": "cd-tls", "hosts": []any{"cd.example.com"}}},
				"rules": []any{map[string]any{"host": "cd.example.com", "http": map[string]any{"paths": []any{map[string]any{
					"path": "/", "pathType": "Prefix",
					"backend": map[string]any{"service": map[string]any{"name": "graphcd-server", "port": map[string]any{"name": "https"}}},
				}}}}},
			}
			if diff := cmp.Diff(ing["spec"], any(want)); diff != "" {
				t.Errorf("Ingress spec (-got +want):\n%s", diff)
			}
			if got := r.field(t, "Ingress", "graphcd-server", "metadata", "annotations", "nginx.ingress.kubernetes.io/backend-protocol"); got != "HTTPS" {
				t.Errorf("Ingress annotation backend-protocol = %q", got)
			}
		},
	}, {
		name: "chat bot with its users and Secret",
		values: map[string]any{"chatops": map[string]any{
			"enabled": true,
			"users":   []any{map[string]any{"slack": "U1", "team": "T1", "user": "alice", "groups": []any{"release"}}},
			"secret":  map[string]any{"token": "tok", "signingSecret": "sig", "webhookURL": "https://hooks.example.com/x"},
		}},
		check: func(t *testing.T, r rendered) {
			want := "users:\n- groups:\n  - release\n  slack: U1\n  team: T1\n  user: alice\n"
			if got := r.field(t, "ConfigMap", "graphcd-chatops-cm", "data", "identities.yaml"); got != want {
				t.Errorf("identities.yaml = %q, want %q", got, want)
			}
			data, _, _ := unstructured.NestedStringMap(r.get(t, "Secret", "graphcd-chatops").Object, "data")
			wantData := map[string]string{"token": "dG9r", "signing-secret": "c2ln", "webhook-url": "aHR0cHM6Ly9ob29rcy5leGFtcGxlLmNvbS94"}
			if diff := cmp.Diff(data, wantData); diff != "" {
				t.Errorf("graphcd-chatops data (-got +want):\n%s", diff)
			}
			c := r.container(t, "Deployment", "graphcd-chatops")
			if !slices.Contains(c.Args, "--server=https://graphcd-server.$(POD_NAMESPACE).svc") || !slices.Contains(c.Args, "--server-ca-file=/etc/graphcd/server-ca/tls.crt") {
				t.Errorf("args %q, want the Service over HTTPS with graphcd-secret's certificate", c.Args)
			}
		},
	}, {
		name:   "chat bot without a Secret, to an insecure server",
		values: map[string]any{"chatops": map[string]any{"enabled": true}, "server": map[string]any{"insecure": true}},
		check: func(t *testing.T, r rendered) {
			if r.has("Secret", "graphcd-chatops") {
				t.Error("the chart made graphcd-chatops with no secret values")
			}
			c := r.container(t, "Deployment", "graphcd-chatops")
			if !slices.Contains(c.Args, "--server=http://graphcd-server.$(POD_NAMESPACE).svc") || slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--server-ca-file") }) {
				t.Errorf("args %q, want the Service over HTTP and no CA file", c.Args)
			}
			if n := len(r.pod(t, "Deployment", "graphcd-chatops").Spec.Volumes); n != 2 {
				t.Errorf("%d volumes, want the Secret and the identities only", n)
			}
		},
	}, {
		name:   "chat bot to a URL of its own",
		values: map[string]any{"chatops": map[string]any{"enabled": true, "server": "https://cd.example.com", "extraArgs": []any{"--log-level=debug"}}},
		check: func(t *testing.T, r rendered) {
			c := r.container(t, "Deployment", "graphcd-chatops")
			if !slices.Contains(c.Args, "--server=https://cd.example.com") || slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--server-ca-file") }) || c.Args[len(c.Args)-1] != "--log-level=debug" {
				t.Errorf("args %q, want the URL, the system's roots and the extra argument last", c.Args)
			}
		},
	}, {
		name:   "insecure server behind the ingress",
		values: map[string]any{"server": map[string]any{"insecure": true}, "ingress": map[string]any{"enabled": true}},
		check: func(t *testing.T, r rendered) {
			rules, _, _ := unstructured.NestedSlice(r.get(t, "Ingress", "graphcd-server").Object, "spec", "rules")
			paths := rules[0].(map[string]any)["http"].(map[string]any)["paths"].([]any)
			if got, _, _ := unstructured.NestedString(paths[0].(map[string]any), "backend", "service", "port", "name"); got != "http" {
				t.Errorf("backend port %q, want http", got)
			}
			if _, ok := rules[0].(map[string]any)["host"]; ok {
				t.Errorf("a rule without hosts has a host: %v", rules[0])
			}
			c := r.container(t, "Deployment", "graphcd-server")
			if !slices.Contains(c.Args, "--insecure") {
				t.Errorf("server args %q, want --insecure", c.Args)
			}
			if c.ReadinessProbe.HTTPGet.Scheme != corev1.URISchemeHTTP || c.LivenessProbe.HTTPGet.Scheme != corev1.URISchemeHTTP {
				t.Errorf("probes %+v %+v, want HTTP", c.ReadinessProbe.HTTPGet, c.LivenessProbe.HTTPGet)
			}
		},
	}, {
		name:   "server certificate",
		values: map[string]any{"server": map[string]any{"tls": map[string]any{"certificate": "CERT", "key": "KEY"}}},
		check: func(t *testing.T, r rendered) {
			s := r.get(t, "Secret", "graphcd-server-tls").Object
			want := map[string]any{"tls.crt": "Q0VSVA==", "tls.key": "S0VZ"}
			if s["type"] != "kubernetes.io/tls" || !cmp.Equal(s["data"], any(want)) {
				t.Errorf("graphcd-server-tls type %v data %v, want kubernetes.io/tls %v", s["type"], s["data"], want)
			}
			if r.pod(t, "Deployment", "graphcd-server").Annotations["checksum/tls"] == "" {
				t.Error("server Pod has no checksum/tls annotation: a new certificate would not restart it")
			}
		},
	}, {
		name: "image",
		values: map[string]any{
			"ha":               ha,
			"image":            map[string]any{"repository": "registry.example.com/graphcd", "tag": "v1.2.3", "pullPolicy": "IfNotPresent"},
			"imagePullSecrets": []any{"regcred"},
		},
		check: func(t *testing.T, r rendered) {
			for _, w := range haWorkloads {
				p := r.pod(t, w[0], w[1])
				c := p.Spec.Containers[0]
				if c.Image != "registry.example.com/graphcd:v1.2.3" || c.ImagePullPolicy != corev1.PullIfNotPresent {
					t.Errorf("%s/%s: image %s pull %s", w[0], w[1], c.Image, c.ImagePullPolicy)
				}
				if !cmp.Equal(p.Spec.ImagePullSecrets, []corev1.LocalObjectReference{{Name: "regcred"}}) {
					t.Errorf("%s/%s: imagePullSecrets %v", w[0], w[1], p.Spec.ImagePullSecrets)
				}
			}
			if got := r.container(t, "Deployment", "graphcd-redis").Image; got != "redis:7.4-alpine" {
				t.Errorf("redis image %s", got)
			}
		},
	}, {
		name: "replicas, shards, resources and extra args of each role",
		values: map[string]any{
			"ha":         ha,
			"server":     map[string]any{"replicas": 3, "extraArgs": []any{"--log-level=debug"}, "resources": map[string]any{"requests": map[string]any{"cpu": "1"}}},
			"controller": map[string]any{"replicas": 4, "extraArgs": []any{"--status-processors=50"}, "resources": map[string]any{"limits": map[string]any{"memory": "8Gi"}}},
			"repoServer": map[string]any{"replicas": 5, "extraArgs": []any{"--render-timeout=5m"}, "resources": map[string]any{"limits": map[string]any{"memory": "16Gi"}}},
			"secretInit": map[string]any{"resources": map[string]any{"limits": map[string]any{"memory": "64Mi"}}},
			"redis":      map[string]any{"resources": map[string]any{"limits": map[string]any{"memory": "2Gi"}}},
		},
		check: func(t *testing.T, r rendered) {
			for _, c := range []struct {
				kind, name string
				replicas   int64
				lastArg    string
				resource   string
			}{
				// server.resources has no defaults in values.yaml: it replaces the mode's.
				{"Deployment", "graphcd-server", 3, "--log-level=debug", "requests.cpu=1"},
				// Helm merges values into the defaults: the others stay.
				{"StatefulSet", "graphcd-controller", 4, "--status-processors=50", "limits.cpu=2,limits.memory=8Gi,requests.cpu=250m,requests.memory=512Mi"},
				{"Deployment", "graphcd-repo-server", 5, "--render-timeout=5m", "limits.cpu=2,limits.memory=16Gi,requests.cpu=250m,requests.memory=512Mi"},
				{"Job", "graphcd-secret-init", 0, "secrets", "limits.cpu=500m,limits.memory=64Mi,requests.cpu=10m,requests.memory=32Mi"},
				{"Deployment", "graphcd-redis", 1, "no", "limits.cpu=1,limits.memory=2Gi,requests.cpu=100m,requests.memory=128Mi"},
			} {
				if c.replicas > 0 {
					if got, _, _ := unstructured.NestedInt64(r.get(t, c.kind, c.name).Object, "spec", "replicas"); got != c.replicas {
						t.Errorf("%s/%s replicas %d, want %d", c.kind, c.name, got, c.replicas)
					}
				}
				ctr := r.container(t, c.kind, c.name)
				if got := ctr.Args[len(ctr.Args)-1]; got != c.lastArg {
					t.Errorf("%s/%s last arg %q, want %q", c.kind, c.name, got, c.lastArg)
				}
				if got := resourcesString(ctr.Resources); got != c.resource {
					t.Errorf("%s/%s resources %s, want %s", c.kind, c.name, got, c.resource)
				}
			}
			if c := r.container(t, "StatefulSet", "graphcd-controller"); !slices.Contains(c.Args, "--shards=4") {
				t.Errorf("controller args %q, want --shards=4", c.Args)
			}
		},
	}, {
		name: "external Redis",
		values: map[string]any{"ha": ha, "redis": map[string]any{
			"enabled":  false,
			"external": map[string]any{"address": "redis.example.com:6380", "existingSecret": "my-redis", "passwordKey": "password"},
		}},
		check: func(t *testing.T, r rendered) {
			for _, kind := range []string{"Deployment", "Service", "ServiceAccount", "NetworkPolicy"} {
				if r.has(kind, "graphcd-redis") {
					t.Errorf("%s/graphcd-redis rendered with redis.enabled=false", kind)
				}
			}
			for _, w := range haWorkloads[:3] {
				c := r.container(t, w[0], w[1])
				if !slices.Contains(c.Args, "--redis=redis.example.com:6380") {
					t.Errorf("%s/%s args %q, want --redis=redis.example.com:6380", w[0], w[1], c.Args)
				}
				want := &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "my-redis"}, Key: "password"}}
				if diff := cmp.Diff(envValueFrom(c, "GRAPHCD_REDIS_PASSWORD"), want); diff != "" {
					t.Errorf("%s/%s GRAPHCD_REDIS_PASSWORD (-got +want):\n%s", w[0], w[1], diff)
				}
			}
		},
	}, {
		name:   "external Redis without a password",
		values: map[string]any{"ha": ha, "redis": map[string]any{"enabled": false, "external": map[string]any{"address": "redis:6379"}}},
		check: func(t *testing.T, r rendered) {
			for _, w := range haWorkloads[:3] {
				if e := envValueFrom(r.container(t, w[0], w[1]), "GRAPHCD_REDIS_PASSWORD"); e != nil {
					t.Errorf("%s/%s reads a Redis password from %v", w[0], w[1], e)
				}
			}
		},
	}, {
		name:   "CRDs managed elsewhere",
		values: map[string]any{"crds": map[string]any{"install": false}},
		check: func(t *testing.T, r rendered) {
			for _, o := range r {
				if o.GetKind() == "CustomResourceDefinition" {
					t.Errorf("CRD %s rendered with crds.install=false", o.GetName())
				}
			}
		},
	}, {
		name:   "CRDs removed on uninstall",
		values: map[string]any{"crds": map[string]any{"keep": false}},
		check: func(t *testing.T, r rendered) {
			if a := r.get(t, "CustomResourceDefinition", "applications.graphcd.io").GetAnnotations(); a["helm.sh/resource-policy"] != "" {
				t.Errorf("annotations %v with crds.keep=false", a)
			}
		},
	}, {
		name:   "apps in any namespace, one process",
		values: map[string]any{"applicationNamespaces": []any{"team-*", "ops"}},
		check: func(t *testing.T, r rendered) {
			if c := r.container(t, "Deployment", "graphcd-server"); !slices.Contains(c.Args, "--application-namespaces=team-*,ops") {
				t.Errorf("server args %q, want --application-namespaces=team-*,ops", c.Args)
			}
			if r.has("ClusterRole", "graphcd-server-applications") {
				t.Error("ClusterRole graphcd-server-applications rendered for the single process, which has every right")
			}
		},
	}, {
		name:   "apps in any namespace, ha",
		values: map[string]any{"ha": ha, "applicationNamespaces": []any{"team-*"}},
		check: func(t *testing.T, r rendered) {
			for _, w := range haWorkloads[:2] {
				if c := r.container(t, w[0], w[1]); !slices.Contains(c.Args, "--application-namespaces=team-*") {
					t.Errorf("%s/%s args %q, want --application-namespaces=team-*", w[0], w[1], c.Args)
				}
			}
			rules, _, _ := unstructured.NestedSlice(r.get(t, "ClusterRole", "graphcd-server-applications").Object, "rules")
			want := []any{
				map[string]any{"apiGroups": []any{"graphcd.io"}, "resources": []any{"applications", "applicationsets"}, "verbs": []any{"get", "list", "watch", "create", "update", "delete"}},
				map[string]any{"apiGroups": []any{"graphcd.io"}, "resources": []any{"applications/status"}, "verbs": []any{"update"}},
			}
			if diff := cmp.Diff(rules, want); diff != "" {
				t.Errorf("ClusterRole graphcd-server-applications rules (-got +want):\n%s", diff)
			}
			if got := r.field(t, "ClusterRoleBinding", "graphcd-server-applications", "roleRef", "name"); got != "graphcd-server-applications" {
				t.Errorf("ClusterRoleBinding graphcd-server-applications binds %q", got)
			}
		},
	}, {
		name:   "no NetworkPolicies",
		values: map[string]any{"ha": ha, "networkPolicy": map[string]any{"enabled": false}},
		check: func(t *testing.T, r rendered) {
			for _, o := range r {
				if o.GetKind() == "NetworkPolicy" {
					t.Errorf("NetworkPolicy %s rendered with networkPolicy.enabled=false", o.GetName())
				}
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			values := tc.values
			// Templating the 360 KB Application CRD takes seconds under
			// -race: left out where the case is not about CRDs.
			if _, ok := values["crds"]; !ok {
				values = maps.Clone(values)
				values["crds"] = map[string]any{"install": false}
			}
			tc.check(t, renderChart(t, releaseNamespace, values))
		})
	}
}

// resourcesString writes requirements as "requests.cpu=1,limits.memory=2Gi".
func resourcesString(r corev1.ResourceRequirements) string {
	var parts []string
	for _, l := range []struct {
		name string
		list corev1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		for k, v := range l.list {
			parts = append(parts, l.name+"."+string(k)+"="+v.String())
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// TestChartRejects wants values with a typo, a wrong type or a
// combination graphcd cannot run to fail to render, saying what is wrong.
func TestChartRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"servr": map[string]any{}}, "additional properties 'servr' not allowed"},
		{map[string]any{"server": map[string]any{"extraArg": []any{"--x"}}}, "at '/server': additional properties 'extraArg' not allowed"},
		{map[string]any{"server": map[string]any{"replicas": "two"}}, "at '/server/replicas': got string"},
		{map[string]any{"controller": map[string]any{"replicas": 0}}, "at '/controller/replicas'"},
		{map[string]any{"ingress": map[string]any{"hosts": "cd.example.com"}}, "at '/ingress/hosts': got string, want array"},
		{map[string]any{"image": map[string]any{"pullPolicy": "always"}}, "at '/image/pullPolicy'"},
		{map[string]any{"configs": map[string]any{"cm": map[string]any{"timeout.reconciliation": 180}}}, "at '/configs/cm/timeout.reconciliation': got number, want string"},
		{map[string]any{"ha": map[string]any{"enabled": "yes"}}, "at '/ha/enabled': got string, want boolean"},
		{map[string]any{"applicationNamespaces": []any{"a,b"}}, "at '/applicationNamespaces/0'"},
		{map[string]any{"server": map[string]any{"replicas": 2}}, "server.replicas above 1 needs ha.enabled"},
		{map[string]any{"redis": map[string]any{"external": map[string]any{"address": "redis:6379"}}}, "redis.external.address applies with ha.enabled only"},
		{map[string]any{"ha": ha, "redis": map[string]any{"external": map[string]any{"address": "redis:6379"}}}, "set redis.enabled=false to use your own Redis"},
		{map[string]any{"ha": ha, "redis": map[string]any{"enabled": false}}, "ha.enabled needs a Redis"},
		{map[string]any{"server": map[string]any{"tls": map[string]any{"certificate": "CERT"}}}, "server.tls.certificate is set without server.tls.key"},
		{map[string]any{"dex": map[string]any{"config": "a: b"}, "configs": map[string]any{"cm": map[string]any{"dex.config": "c: d"}}}, "dex.config and configs.cm.dex.config are both set"},
		{map[string]any{"chatops": map[string]any{"secret": map[string]any{"token": "t", "signingSecret": "s"}}}, "chatops.secret needs token, signingSecret and webhookURL together"},
		{map[string]any{"chatops": map[string]any{"users": []any{map[string]any{"slack": "U1", "user": "alice"}}}}, "at '/chatops/users/0': missing property 'team'"},
		{map[string]any{"chatops": map[string]any{"users": []any{map[string]any{"slack": "U1", "team": "T1", "user": "alice", "group": "release"}}}}, "additional properties 'group' not allowed"},
	} {
		values := maps.Clone(tc.values)
		values["crds"] = map[string]any{"install": false} // faster under -race
		_, err := tryRenderChart(releaseNamespace, values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %v: error %v, want one containing %q", tc.values, err, tc.want)
		}
	}
}
