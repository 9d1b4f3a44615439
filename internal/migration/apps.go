package migration

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// project converts an AppProject. Tokens Argo CD issued for its roles do
// not verify in graphcd and are left out.
func (c *converter) project(from *unstructured.Unstructured) {
	r := &Object{From: describe(from)}
	obj := newObject(from, graphcdVersion, c.opts.Namespace, from.GetName(), r)
	s := spec(from, &v1alpha1.AppProjectSpec{}, r)
	if s == nil {
		c.add(r, nil)
		return
	}
	roles, _, _ := unstructured.NestedSlice(s, "roles")
	for i, role := range roles {
		m, ok := role.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		if tokens, _ := m["jwtTokens"].([]any); len(tokens) > 0 {
			r.change("role %s: %d token(s) Argo CD issued left out: they do not verify in graphcd; issue new ones (createProjectToken)", name, len(tokens))
			delete(m, "jwtTokens")
		}
		policies, _ := m["policies"].([]any)
		groups, _ := m["groups"].([]any)
		r.same("role %s: %d policy line(s), %d group(s), the same subject proj:%s:%s", name, len(policies), len(groups), from.GetName(), name)
		roles[i] = m
	}
	if len(roles) > 0 {
		_ = unstructured.SetNestedSlice(s, roles, "roles")
	}
	if windows, _, _ := unstructured.NestedSlice(s, "syncWindows"); len(windows) > 0 {
		r.same("%d sync window(s)", len(windows))
	}
	if _, ok := from.Object["status"]; ok {
		r.change("status left out: graphcd records its own tokens")
	}
	obj.Object["spec"] = s
	c.add(r, obj)
}

// application converts an Application; its status and operation are the
// controller's and are left out.
func (c *converter) application(from *unstructured.Unstructured) {
	r := &Object{From: describe(from)}
	ns := c.crNamespace(from.GetNamespace())
	obj := newObject(from, graphcdVersion, ns, from.GetName(), r)
	if ns != c.opts.Namespace {
		r.change("stays in namespace %s: graphcd serves it only when --application-namespaces names it", ns)
	}
	from = automatedEnabled(from, r)
	s := spec(from, &v1alpha1.ApplicationSpec{}, r)
	if s == nil {
		c.add(r, nil)
		return
	}
	r.same("tracking id %s: live resources keep their owner", c.trackingID(from))
	if _, ok := from.Object["status"]; ok {
		r.change("status left out: graphcd compares again; sync history starts anew")
	}
	if _, ok := from.Object["operation"]; ok {
		r.unsupported("operation in progress: not carried; sync again in graphcd")
	}
	obj.Object["spec"] = s
	c.add(r, obj)
}

// automatedEnabled returns from without Argo CD 3's
// syncPolicy.automated.enabled, which graphcd does not have: enabled:
// false turns automated sync off, so then automated goes too.
func automatedEnabled(from *unstructured.Unstructured, r *Object) *unstructured.Unstructured {
	enabled, found, _ := unstructured.NestedBool(from.Object, "spec", "syncPolicy", "automated", "enabled")
	if !found {
		return from
	}
	from = from.DeepCopy()
	if enabled {
		unstructured.RemoveNestedField(from.Object, "spec", "syncPolicy", "automated", "enabled")
		r.change("spec.syncPolicy.automated.enabled: true left out: automated sync is on in graphcd while automated is set")
		return from
	}
	unstructured.RemoveNestedField(from.Object, "spec", "syncPolicy", "automated")
	r.change("spec.syncPolicy.automated with enabled: false left out: graphcd has no switch, so automated sync stays off by having none")
	return from
}

// trackingID is the application name Argo CD and graphcd write into
// tracking annotations and labels: the name in the control-plane
// namespace, <namespace>_<name> elsewhere.
func (c *converter) trackingID(app *unstructured.Unstructured) string {
	if app.GetNamespace() == c.src.Namespace {
		return app.GetName()
	}
	return fmt.Sprintf("%s_%s", app.GetNamespace(), app.GetName())
}

// applicationSet converts an ApplicationSet; it generates graphcd's
// Applications from then on.
func (c *converter) applicationSet(from *unstructured.Unstructured) {
	r := &Object{From: describe(from)}
	ns := c.crNamespace(from.GetNamespace())
	obj := newObject(from, graphcdVersion, ns, from.GetName(), r)
	s := spec(from, &v1alpha1.ApplicationSetSpec{}, r)
	if s == nil {
		c.add(r, nil)
		return
	}
	r.change("generates graphcd.io Applications from now on")
	obj.Object["spec"] = s
	c.add(r, obj)
}
