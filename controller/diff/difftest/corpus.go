// Package difftest generates realistic desired/live object pairs for
// tests and benchmarks of diff engines. It imports nothing of graphcd, so
// a benchmark in another module can feed the same corpus to a different
// engine.
package difftest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// LastApplied is the annotation kubectl and Argo CD write on apply.
const LastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Pair is one desired object (as rendered from Git) and its live
// counterpart (as read from the API server: defaults filled in, status,
// managedFields, the last-applied annotation of the previous apply).
type Pair struct {
	Name          string
	Desired, Live *unstructured.Unstructured
	// Modified tells that desired was changed after the last apply, so
	// a correct engine must report a difference; otherwise it must not.
	Modified bool
}

type (
	m = map[string]any
	l = []any
)

// Corpus returns n pairs built deterministically from seed: Deployments,
// Services, ConfigMaps, Secrets, CustomResourceDefinitions and custom
// resources, about 30% of them modified.
func Corpus(n int, seed int64) []Pair {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15)) //nolint:gosec // reproducible corpus
	out := make([]Pair, 0, n)
	kinds := []func(*rand.Rand, int) (m, func(*rand.Rand, m), func(m)){
		deployment, service, configMap, secret, crd, customResource,
	}
	for i := range n {
		gen := kinds[i%len(kinds)]
		applied, mutate, defaults := gen(r, i)
		live := runtime.DeepCopyJSON(applied)
		defaults(live)
		serverMetadata(r, live, applied)
		desired := runtime.DeepCopyJSON(applied)
		modified := r.Float64() < 0.3
		if modified {
			mutate(r, desired)
		}
		kind := applied["kind"].(string)
		out = append(out, Pair{
			Name:     fmt.Sprintf("%03d-%s", i, strings.ToLower(kind)),
			Desired:  &unstructured.Unstructured{Object: desired},
			Live:     &unstructured.Unstructured{Object: live},
			Modified: modified,
		})
	}
	return out
}

func meta(kind, apiVersion, name, ns string, labels m) m {
	md := m{"name": name, "labels": labels}
	if ns != "" {
		md["namespace"] = ns
	}
	return m{"apiVersion": apiVersion, "kind": kind, "metadata": md}
}

func labelsFor(app string, r *rand.Rand) m {
	lb := m{
		"app.kubernetes.io/name":       app,
		"app.kubernetes.io/instance":   app + "-prod",
		"app.kubernetes.io/managed-by": "graphcd",
	}
	if r.IntN(2) == 0 {
		lb["team"] = []string{"payments", "search", "platform"}[r.IntN(3)]
	}
	return lb
}

func namespace(r *rand.Rand) string {
	return []string{"default", "prod", "staging", "tools"}[r.IntN(4)]
}

func container(r *rand.Rand, name string, i int) m {
	env := l{}
	for e := range 5 + r.IntN(10) {
		env = append(env, m{"name": fmt.Sprintf("ENV_%d", e), "value": fmt.Sprintf("value-%d-%d", i, e)})
	}
	cpu := []string{"100m", "250m", "0.5", "1"}[r.IntN(4)]
	c := m{
		"name":  name,
		"image": fmt.Sprintf("registry.example.com/%s:v1.%d.%d", name, i%7, r.IntN(20)),
		"ports": l{m{"name": "http", "containerPort": int64(8080)}},
		"env":   env,
		"resources": m{
			"requests": m{"cpu": cpu, "memory": "128Mi"},
			"limits":   m{"cpu": "2", "memory": "512Mi"},
		},
		"readinessProbe": m{"httpGet": m{"path": "/healthz", "port": "http"}, "initialDelaySeconds": int64(5)},
		"volumeMounts":   l{m{"name": "config", "mountPath": "/etc/" + name}},
	}
	if r.IntN(2) == 0 {
		c["args"] = l{"--log-level=info", fmt.Sprintf("--shard=%d", i)}
	}
	return c
}

func deployment(r *rand.Rand, i int) (m, func(*rand.Rand, m), func(m)) {
	app := fmt.Sprintf("svc-%d", i)
	obj := meta("Deployment", "apps/v1", app, namespace(r), labelsFor(app, r))
	containers := l{container(r, app, i)}
	if r.IntN(3) == 0 {
		containers = append(containers, container(r, "sidecar", i))
	}
	obj["spec"] = m{
		"replicas": int64(1 + r.IntN(5)),
		"selector": m{"matchLabels": m{"app.kubernetes.io/name": app}},
		"template": m{
			"metadata": m{"labels": m{"app.kubernetes.io/name": app}},
			"spec": m{
				"containers":         containers,
				"serviceAccountName": app,
				"volumes":            l{m{"name": "config", "configMap": m{"name": app + "-config"}}},
			},
		},
	}
	mutate := func(r *rand.Rand, o m) {
		spec := o["spec"].(m)
		c := spec["template"].(m)["spec"].(m)["containers"].(l)[0].(m)
		switch r.IntN(4) {
		case 0:
			c["image"] = c["image"].(string) + "-hotfix"
		case 1:
			spec["replicas"] = spec["replicas"].(int64) + 1
		case 2:
			c["env"].(l)[0].(m)["value"] = "changed"
		default:
			delete(o["metadata"].(m)["labels"].(m), "app.kubernetes.io/managed-by")
		}
	}
	defaults := func(o m) {
		spec := o["spec"].(m)
		spec["progressDeadlineSeconds"] = int64(600)
		spec["revisionHistoryLimit"] = int64(10)
		spec["strategy"] = m{"type": "RollingUpdate", "rollingUpdate": m{"maxSurge": "25%", "maxUnavailable": "25%"}}
		tmpl := spec["template"].(m)
		tmpl["metadata"].(m)["creationTimestamp"] = nil
		ps := tmpl["spec"].(m)
		ps["dnsPolicy"] = "ClusterFirst"
		ps["restartPolicy"] = "Always"
		ps["schedulerName"] = "default-scheduler"
		ps["securityContext"] = m{}
		ps["terminationGracePeriodSeconds"] = int64(30)
		ps["serviceAccount"] = ps["serviceAccountName"]
		ps["volumes"].(l)[0].(m)["configMap"].(m)["defaultMode"] = int64(420)
		for _, ci := range ps["containers"].(l) {
			c := ci.(m)
			c["imagePullPolicy"] = "IfNotPresent"
			c["terminationMessagePath"] = "/dev/termination-log"
			c["terminationMessagePolicy"] = "File"
			c["ports"].(l)[0].(m)["protocol"] = "TCP"
			req := c["resources"].(m)["requests"].(m)
			if req["cpu"] == "0.5" {
				req["cpu"] = "500m" // the API server's canonical spelling
			}
			p := c["readinessProbe"].(m)
			p["httpGet"].(m)["scheme"] = "HTTP"
			p["timeoutSeconds"], p["periodSeconds"] = int64(1), int64(10)
			p["successThreshold"], p["failureThreshold"] = int64(1), int64(3)
		}
		o["metadata"].(m)["annotations"] = m{"deployment.kubernetes.io/revision": "3"}
		replicas := spec["replicas"]
		o["status"] = m{
			"availableReplicas": replicas, "readyReplicas": replicas, "replicas": replicas,
			"updatedReplicas": replicas, "observedGeneration": int64(4),
			"conditions": l{
				m{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
					"lastTransitionTime": "2026-01-02T03:04:05Z", "lastUpdateTime": "2026-01-02T03:04:05Z",
					"message": "Deployment has minimum availability."},
				m{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
					"lastTransitionTime": "2026-01-02T03:04:05Z", "lastUpdateTime": "2026-01-02T03:04:05Z",
					"message": "ReplicaSet has successfully progressed."},
			},
		}
	}
	return obj, mutate, defaults
}

func service(r *rand.Rand, i int) (m, func(*rand.Rand, m), func(m)) {
	app := fmt.Sprintf("svc-%d", i)
	obj := meta("Service", "v1", app, namespace(r), labelsFor(app, r))
	ports := l{m{"name": "http", "port": int64(80), "targetPort": "http"}}
	if r.IntN(2) == 0 {
		ports = append(ports, m{"name": "metrics", "port": int64(9090), "targetPort": int64(9090)})
	}
	obj["spec"] = m{"selector": m{"app.kubernetes.io/name": app}, "ports": ports}
	mutate := func(r *rand.Rand, o m) {
		spec := o["spec"].(m)
		if r.IntN(2) == 0 {
			spec["ports"].(l)[0].(m)["port"] = int64(8081)
		} else {
			spec["selector"].(m)["tier"] = "backend"
		}
	}
	defaults := func(o m) {
		spec := o["spec"].(m)
		ip := fmt.Sprintf("10.96.%d.%d", i/250, i%250+1)
		spec["clusterIP"], spec["clusterIPs"] = ip, l{ip}
		spec["internalTrafficPolicy"] = "Cluster"
		spec["ipFamilies"] = l{"IPv4"}
		spec["ipFamilyPolicy"] = "SingleStack"
		spec["sessionAffinity"] = "None"
		spec["type"] = "ClusterIP"
		for _, p := range spec["ports"].(l) {
			p.(m)["protocol"] = "TCP"
		}
		o["status"] = m{"loadBalancer": m{}}
	}
	return obj, mutate, defaults
}

func configMap(r *rand.Rand, i int) (m, func(*rand.Rand, m), func(m)) {
	app := fmt.Sprintf("svc-%d", i)
	obj := meta("ConfigMap", "v1", app+"-config", namespace(r), labelsFor(app, r))
	data := m{}
	for k := range 3 + r.IntN(6) {
		data[fmt.Sprintf("key-%d", k)] = fmt.Sprintf("value %d of %d", k, i)
	}
	var sb strings.Builder
	for line := range 20 + r.IntN(40) {
		fmt.Fprintf(&sb, "setting.%d = %d\n", line, r.IntN(1000))
	}
	data["app.properties"] = sb.String()
	obj["data"] = data
	mutate := func(r *rand.Rand, o m) {
		d := o["data"].(m)
		switch r.IntN(3) {
		case 0:
			d["key-0"] = "changed"
		case 1:
			d["new-key"] = "added"
		default:
			delete(d, "key-1") // still in the last-applied annotation: a removal
		}
	}
	return obj, mutate, func(m) {}
}

func secret(r *rand.Rand, i int) (m, func(*rand.Rand, m), func(m)) {
	app := fmt.Sprintf("svc-%d", i)
	obj := meta("Secret", "v1", app+"-credentials", namespace(r), labelsFor(app, r))
	plain := m{}
	for k := range 2 + r.IntN(4) {
		plain[fmt.Sprintf("password-%d", k)] = fmt.Sprintf("s3cr3t-%d-%d", i, r.Uint32())
	}
	useStringData := r.IntN(2) == 0
	if useStringData {
		obj["stringData"] = plain
	} else {
		obj["data"] = encodeAll(plain)
	}
	mutate := func(r *rand.Rand, o m) {
		field := "data"
		val := any(base64.StdEncoding.EncodeToString([]byte("rotated")))
		if _, ok := o["stringData"]; ok {
			field, val = "stringData", "rotated"
		}
		o[field].(m)["password-0"] = val
	}
	defaults := func(o m) {
		if sd, ok := o["stringData"].(m); ok {
			delete(o, "stringData")
			o["data"] = encodeAll(sd)
		}
		o["type"] = "Opaque"
	}
	return obj, mutate, defaults
}

func encodeAll(plain m) m {
	out := m{}
	for k, v := range plain {
		out[k] = base64.StdEncoding.EncodeToString([]byte(v.(string)))
	}
	return out
}

func crd(r *rand.Rand, i int) (m, func(*rand.Rand, m), func(m)) {
	plural := fmt.Sprintf("widgets%d", i)
	obj := meta("CustomResourceDefinition", "apiextensions.k8s.io/v1", plural+".example.com", "", m{"app.kubernetes.io/part-of": "widgets"})
	props := m{}
	for p := range 5 + r.IntN(10) {
		props[fmt.Sprintf("field%d", p)] = m{"type": []string{"string", "integer", "boolean"}[p%3], "description": fmt.Sprintf("Field %d of the widget.", p)}
	}
	props["nested"] = m{"type": "object", "properties": m{"inner": m{"type": "string"}}}
	obj["spec"] = m{
		"group": "example.com",
		"names": m{"kind": fmt.Sprintf("Widget%d", i), "plural": plural, "singular": fmt.Sprintf("widget%d", i), "listKind": fmt.Sprintf("Widget%dList", i)},
		"scope": "Namespaced",
		"versions": l{m{
			"name": "v1", "served": true, "storage": true,
			"schema": m{"openAPIV3Schema": m{"type": "object", "properties": m{
				"spec":   m{"type": "object", "properties": props},
				"status": m{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
			}}},
			"subresources": m{"status": m{}},
		}},
	}
	mutate := func(r *rand.Rand, o m) {
		v := o["spec"].(m)["versions"].(l)[0].(m)
		v["served"] = false
	}
	defaults := func(o m) {
		spec := o["spec"].(m)
		spec["conversion"] = m{"strategy": "None"}
		o["status"] = m{
			"acceptedNames":  spec["names"],
			"storedVersions": l{"v1"},
			"conditions": l{m{"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
				"lastTransitionTime": "2026-01-02T03:04:05Z", "message": "the initial names have been accepted"}},
		}
	}
	return obj, mutate, defaults
}

func customResource(r *rand.Rand, i int) (m, func(*rand.Rand, m), func(m)) {
	name := fmt.Sprintf("widget-%d", i)
	obj := meta("Widget", "example.com/v1", name, namespace(r), labelsFor(name, r))
	obj["spec"] = m{
		"size":     int64(r.IntN(10)),
		"color":    []string{"red", "green", "blue"}[r.IntN(3)],
		"enabled":  true,
		"interval": "5m",
		"targets":  l{m{"host": "a.example.com", "weight": int64(50)}, m{"host": "b.example.com", "weight": int64(50)}},
		"nested":   m{"inner": fmt.Sprintf("x-%d", r.IntN(100))},
	}
	mutate := func(r *rand.Rand, o m) {
		spec := o["spec"].(m)
		if r.IntN(2) == 0 {
			spec["color"] = "purple"
		} else {
			spec["targets"].(l)[1].(m)["weight"] = int64(70)
		}
	}
	defaults := func(o m) {
		o["metadata"].(m)["finalizers"] = l{"example.com/cleanup"}
		o["status"] = m{"phase": "Ready", "observedGeneration": int64(2)}
	}
	return obj, mutate, defaults
}

// serverMetadata adds what the API server and controllers write: ids,
// timestamps, the last-applied annotation of applied, managedFields.
func serverMetadata(r *rand.Rand, live, applied m) {
	md := live["metadata"].(m)
	md["uid"] = fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
	md["resourceVersion"] = fmt.Sprint(100000 + r.IntN(900000))
	md["generation"] = int64(1 + r.IntN(5))
	md["creationTimestamp"] = "2026-01-02T03:04:05Z"
	ann, _ := md["annotations"].(m)
	if ann == nil {
		ann = m{}
		md["annotations"] = ann
	}
	last, err := json.Marshal(applied)
	if err != nil {
		panic(err) // generated maps always marshal
	}
	ann[LastApplied] = string(last)
	mf := l{m{
		"manager": "argocd-controller", "operation": "Update", "apiVersion": live["apiVersion"],
		"time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1", "fieldsV1": fieldsV1(applied),
	}}
	if _, ok := live["status"]; ok {
		mf = append(mf, m{
			"manager": "kube-controller-manager", "operation": "Update", "apiVersion": live["apiVersion"],
			"time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1", "subresource": "status",
			"fieldsV1": m{"f:status": fieldsV1(live["status"].(m))},
		})
	}
	md["managedFields"] = mf
}

// fieldsV1 renders the field set of obj in managedFields' FieldsV1 form.
func fieldsV1(obj m) m {
	out := m{}
	for k, v := range obj {
		switch x := v.(type) {
		case m:
			out["f:"+k] = fieldsV1(x)
		case l:
			set := m{}
			for _, e := range x {
				em, ok := e.(m)
				if !ok {
					continue
				}
				name, ok := em["name"].(string)
				if !ok {
					continue
				}
				child := fieldsV1(em)
				child["."] = m{}
				set[fmt.Sprintf(`k:{"name":%q}`, name)] = child
			}
			out["f:"+k] = set
		default:
			out["f:"+k] = m{}
		}
	}
	return out
}
