package diff

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// canonKind names a value type whose spellings the API server
// canonicalises, so that two spellings of one value compare equal.
type canonKind uint8

const (
	canonNone     canonKind = iota
	canonQuantity           // resource.Quantity: "1000m" == "1", "1Gi" == "1073741824"
	canonIntOrStr           // intstr.IntOrString and int ports: "80" == 80
	canonDuration           // metav1.Duration: "1h" == "1h0m0s"
	canonBase64             // Secret data: equal decoded bytes
)

// schemaNode describes the known shape of a built-in type, enough to
// canonicalise values and to merge lists by key as strategic merge patch
// does. A nil node means "unknown": values compare as plain JSON.
type schemaNode struct {
	fields   map[string]*schemaNode
	anyKey   *schemaNode // for maps with free keys (resources.limits)
	elem     *schemaNode // for lists
	mergeKey string      // list of objects merged by this key
	canon    canonKind
}

func (s *schemaNode) field(k string) *schemaNode {
	if s == nil {
		return nil
	}
	if c := s.fields[k]; c != nil {
		return c
	}
	return s.anyKey
}

func obj(f map[string]*schemaNode) *schemaNode { return &schemaNode{fields: f} }
func keyed(key string, elem *schemaNode) *schemaNode {
	return &schemaNode{mergeKey: key, elem: elem}
}
func list(elem *schemaNode) *schemaNode  { return &schemaNode{elem: elem} }
func freeKeys(v *schemaNode) *schemaNode { return &schemaNode{anyKey: v} }
func leaf(c canonKind) *schemaNode       { return &schemaNode{canon: c} }
func at(p string, v *schemaNode) *schemaNode {
	parts := strings.Split(p, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		v = obj(map[string]*schemaNode{parts[i]: v})
	}
	return v
}

var knownTypes = buildKnownTypes()

func buildKnownTypes() map[schema.GroupKind]*schemaNode {
	quantities := freeKeys(leaf(canonQuantity))
	resources := obj(map[string]*schemaNode{"limits": quantities, "requests": quantities})
	port := leaf(canonIntOrStr)
	handler := obj(map[string]*schemaNode{
		"httpGet":   obj(map[string]*schemaNode{"port": port}),
		"tcpSocket": obj(map[string]*schemaNode{"port": port}),
		"grpc":      obj(map[string]*schemaNode{"port": port}),
	})
	container := obj(map[string]*schemaNode{
		"ports": keyed("containerPort", obj(map[string]*schemaNode{
			"containerPort": port, "hostPort": port,
		})),
		"env":            keyed("name", nil),
		"volumeMounts":   keyed("mountPath", nil),
		"volumeDevices":  keyed("devicePath", nil),
		"resources":      resources,
		"livenessProbe":  handler,
		"readinessProbe": handler,
		"startupProbe":   handler,
		"lifecycle":      obj(map[string]*schemaNode{"postStart": handler, "preStop": handler}),
	})
	podSpec := obj(map[string]*schemaNode{
		"containers":          keyed("name", container),
		"initContainers":      keyed("name", container),
		"ephemeralContainers": keyed("name", container),
		"volumes": keyed("name", obj(map[string]*schemaNode{
			"emptyDir": obj(map[string]*schemaNode{"sizeLimit": leaf(canonQuantity)}),
		})),
		"imagePullSecrets": keyed("name", nil),
		"hostAliases":      keyed("ip", nil),
		"overhead":         quantities,
		"resources":        resources,
	})
	template := at("spec.template.spec", podSpec)
	rolling := func(extra map[string]*schemaNode) *schemaNode {
		f := map[string]*schemaNode{
			"template": obj(map[string]*schemaNode{"spec": podSpec}),
		}
		for k, v := range extra {
			f[k] = v
		}
		return obj(map[string]*schemaNode{"spec": obj(f)})
	}
	surge := obj(map[string]*schemaNode{"rollingUpdate": obj(map[string]*schemaNode{
		"maxSurge": leaf(canonIntOrStr), "maxUnavailable": leaf(canonIntOrStr),
	})})
	pvc := obj(map[string]*schemaNode{"spec": obj(map[string]*schemaNode{"resources": resources})})
	netPorts := list(obj(map[string]*schemaNode{"ports": list(obj(map[string]*schemaNode{
		"port": port, "endPort": port,
	}))}))
	backend := obj(map[string]*schemaNode{"service": at("port.number", port)})
	certDur := at("spec", obj(map[string]*schemaNode{
		"duration": leaf(canonDuration), "renewBefore": leaf(canonDuration),
	}))
	fluxDur := at("spec", obj(map[string]*schemaNode{
		"interval": leaf(canonDuration), "timeout": leaf(canonDuration),
		"retryInterval": leaf(canonDuration),
	}))

	m := map[schema.GroupKind]*schemaNode{
		{Kind: "Pod"}:                       obj(map[string]*schemaNode{"spec": podSpec}),
		{Group: "apps", Kind: "Deployment"}: rolling(map[string]*schemaNode{"strategy": surge}),
		{Group: "apps", Kind: "DaemonSet"}:  rolling(map[string]*schemaNode{"updateStrategy": surge}),
		{Group: "apps", Kind: "ReplicaSet"}: template,
		{Group: "batch", Kind: "Job"}:       template,
		{Group: "batch", Kind: "CronJob"}:   at("spec.jobTemplate", template),
		{Kind: "ReplicationController"}:     template,
		{Kind: "PodTemplate"}:               at("template.spec", podSpec),
		{Kind: "PersistentVolumeClaim"}:     pvc,
		{Kind: "PersistentVolume"}:          at("spec.capacity", quantities),
		{Kind: "ResourceQuota"}:             at("spec.hard", quantities),
		{Group: "policy", Kind: "PodDisruptionBudget"}: at("spec", obj(map[string]*schemaNode{
			"minAvailable": leaf(canonIntOrStr), "maxUnavailable": leaf(canonIntOrStr),
		})),
		{Kind: "LimitRange"}: at("spec.limits", list(obj(map[string]*schemaNode{
			"max": quantities, "min": quantities, "default": quantities,
			"defaultRequest": quantities, "maxLimitRequestRatio": quantities,
		}))),
		{Kind: "Service"}: at("spec.ports", keyed("port", obj(map[string]*schemaNode{
			"port": port, "targetPort": port, "nodePort": port,
		}))),
		{Kind: "Secret"}: obj(map[string]*schemaNode{"data": freeKeys(leaf(canonBase64))}),
		{Group: "networking.k8s.io", Kind: "Ingress"}: at("spec", obj(map[string]*schemaNode{
			"defaultBackend": backend,
			"rules": list(at("http.paths", list(obj(map[string]*schemaNode{
				"backend": backend,
			})))),
		})),
		{Group: "networking.k8s.io", Kind: "NetworkPolicy"}: at("spec", obj(map[string]*schemaNode{
			"ingress": netPorts, "egress": netPorts,
		})),
		{Group: "cert-manager.io", Kind: "Certificate"}:               certDur,
		{Group: "kustomize.toolkit.fluxcd.io", Kind: "Kustomization"}: fluxDur,
		{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease"}:        fluxDur,
		{Group: "source.toolkit.fluxcd.io", Kind: "GitRepository"}:    fluxDur,
		{Group: "source.toolkit.fluxcd.io", Kind: "HelmRepository"}:   fluxDur,
		{Group: "source.toolkit.fluxcd.io", Kind: "OCIRepository"}:    fluxDur,
		{Group: "apps", Kind: "StatefulSet"}: rolling(map[string]*schemaNode{
			"volumeClaimTemplates": list(pvc),
			"updateStrategy":       surge,
		}),
	}
	return m
}

// canonEqual reports whether a and b spell the same value of kind c.
func canonEqual(c canonKind, a, b any) bool {
	switch c {
	case canonQuantity:
		sa, ok1 := numberText(a)
		sb, ok2 := numberText(b)
		if !ok1 || !ok2 {
			return false
		}
		qa, err1 := resource.ParseQuantity(sa)
		qb, err2 := resource.ParseQuantity(sb)
		return err1 == nil && err2 == nil && qa.Cmp(qb) == 0
	case canonIntOrStr:
		fa, ok1 := intText(a)
		fb, ok2 := intText(b)
		return ok1 && ok2 && fa == fb
	case canonDuration:
		sa, ok1 := a.(string)
		sb, ok2 := b.(string)
		if !ok1 || !ok2 {
			return false
		}
		da, err1 := time.ParseDuration(sa)
		db, err2 := time.ParseDuration(sb)
		return err1 == nil && err2 == nil && da == db
	case canonBase64:
		sa, ok1 := a.(string)
		sb, ok2 := b.(string)
		if !ok1 || !ok2 {
			return false
		}
		da, err1 := base64.StdEncoding.DecodeString(sa)
		db, err2 := base64.StdEncoding.DecodeString(sb)
		return err1 == nil && err2 == nil && bytes.Equal(da, db)
	}
	return false
}

// numberText spells a quantity given as a string or a JSON number.
func numberText(v any) (string, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	if f, ok := toFloat(v); ok {
		return strconv.FormatFloat(f, 'f', -1, 64), true
	}
	return "", false
}

// intText reads an int-or-string that holds a whole number.
func intText(v any) (int64, bool) {
	if s, ok := v.(string); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		return n, err == nil
	}
	f, ok := toFloat(v)
	if !ok || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}
