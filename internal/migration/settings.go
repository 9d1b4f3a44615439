package migration

import (
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/internal/settings"
)

// Settings keys.
const (
	keyTrackingMethod = "application.resourceTrackingMethod"
	keyInstanceLabel  = "application.instanceLabelKey"
)

// unsupportedKeys are argocd-cm keys, or key prefixes (ending in "."),
// that graphcd does not read, with what to do instead.
var unsupportedKeys = []struct{ key, instead string }{
	{"timeout.reconciliation", "use graphcd's --app-resync"},
	{"timeout.hard.reconciliation", "graphcd has no periodic hard refresh"},
	{"timeout.reconciliation.jitter", "graphcd adds up to half of --app-resync as jitter"},
	{"users.session.duration", "use graphcd's --session-duration"},
	{"resource.customizations.knownTypeFields.", "graphcd does not read it"},
	{"resource.ignoreResourceUpdatesEnabled", "graphcd does not read it"},
	{"kustomize.version.", "graphcd renders with its built-in kustomize; a source naming a version is refused"},
	{"kustomize.path.", "graphcd renders with its built-in kustomize"},
	{"kustomize.buildOptions.", "versioned build options are not read; kustomize.buildOptions is"},
	{"configManagementPlugins", "run the plugins as sidecars (graphcd cmp-server)"},
	{"ui.cssurl", "the console has no custom CSS"},
	{"installationID", "graphcd neither writes nor checks installation ids"},
}

// unsupported returns what to do instead of key, when graphcd does not
// read it.
func unsupported(key string) (string, bool) {
	for _, u := range unsupportedKeys {
		if key == u.key || (strings.HasSuffix(u.key, ".") && strings.HasPrefix(key, u.key)) {
			return u.instead, true
		}
	}
	return "", false
}

// settingsOrder is the order settings ConfigMaps are converted and
// reported in.
var settingsOrder = []string{ArgoSettingsConfigMap, ArgoRBACConfigMap, ArgoNotificationsConfigMap, ArgoKnownHostsConfigMap, ArgoTLSCertsConfigMap, ArgoGPGKeysConfigMap}

// settings converts the settings ConfigMaps to graphcd's names.
func (c *converter) settings() {
	for _, name := range settingsOrder {
		from := c.src.ConfigMaps[name]
		if from == nil {
			continue
		}
		r := &Object{From: describe(from)}
		to, ok := c.opts.ConfigMaps[name]
		if !ok {
			r.unsupported("graphcd has no such ConfigMap")
			c.add(r, nil)
			continue
		}
		data, _, _ := unstructured.NestedStringMap(from.Object, "data")
		switch name {
		case ArgoSettingsConfigMap:
			data = c.argoCM(data, r)
		case ArgoRBACConfigMap:
			rbacCM(data, r)
		default:
			r.same("%d key(s)", len(data))
		}
		obj := newObject(from, "v1", c.opts.Namespace, to, r)
		obj.Object["data"] = toAny(data)
		c.add(r, obj)
	}
}

// argoCM returns the graphcd-cm data for argocd-cm's.
func (c *converter) argoCM(data map[string]string, r *Object) map[string]string {
	out := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(data)) {
		if instead, ok := unsupported(key); ok {
			r.unsupported("%s: graphcd does not read it; %s", key, instead)
			continue
		}
		out[key] = data[key]
	}
	switch method := strings.TrimSpace(data[keyTrackingMethod]); {
	case method != "":
		r.same("%s %s", keyTrackingMethod, method)
	case c.argoCD2():
		out[keyTrackingMethod] = settings.TrackingLabel
		r.change("%s unset, which Argo CD 2 reads as label: set to label, so graphcd tracks the same resources", keyTrackingMethod)
	default:
		out[keyTrackingMethod] = settings.DefaultTrackingMethod
		r.change("%s unset, which Argo CD 3 reads as annotation: set to annotation (if this Argo CD is 2.x, set it to label)", keyTrackingMethod)
	}
	if key := strings.TrimSpace(data[keyInstanceLabel]); key != "" {
		r.same("%s %s", keyInstanceLabel, key)
	} else {
		r.same("%s %s (the default of both)", keyInstanceLabel, settings.DefaultInstanceLabelKey)
	}
	for _, key := range []string{"dex.config", "oidc.config"} {
		if data[key] != "" {
			r.same("%s (its $key references are copied into %s)", key, c.opts.Secrets[ArgoSecret])
		}
	}
	for _, key := range slices.Sorted(maps.Keys(data)) {
		if name, ok := strings.CutPrefix(key, "accounts."); ok && !strings.Contains(name, ".") {
			r.same("account %s (%s)", name, data[key])
		}
	}
	if _, err := settings.Parse(out); err != nil {
		r.unsupported("graphcd refuses these settings: %v", err)
	}
	return out
}

// argoCD2 reports whether Argo CD's controller runs an image of Argo CD 2.
func (c *converter) argoCD2() bool {
	for _, w := range c.src.Controllers {
		if _, tag, ok := strings.Cut(w.Image[strings.LastIndex(w.Image, "/")+1:], ":"); ok && strings.HasPrefix(tag, "v2.") {
			return true
		}
	}
	return false
}

// rbacCM reports on argocd-rbac-cm, whose keys and format graphcd reads
// as they are.
func rbacCM(data map[string]string, r *Object) {
	for _, key := range slices.Sorted(maps.Keys(data)) {
		switch {
		case key == rbac.KeyPolicyCSV || key == rbac.KeyPolicyDefault || key == rbac.KeyMatchMode || key == rbac.KeyScopes,
			strings.HasPrefix(key, "policy.") && strings.HasSuffix(key, ".csv"):
			r.same("%s", key)
		default:
			r.unsupported("%s: not an RBAC key graphcd reads", key)
		}
	}
	if roles := policyRoles(data); len(roles) > 0 {
		r.same("roles %s: the same names, built-in role:readonly and role:admin included", strings.Join(roles, ", "))
	}
	if d := strings.TrimSpace(data[rbac.KeyPolicyDefault]); d != "" {
		r.same("default role %s", d)
	}
	_, err := rbac.Parse(data)
	var ve *rbac.ValidationError
	switch {
	case errors.As(err, &ve):
		for _, l := range ve.Lines {
			r.unsupported("policy line refused by graphcd: %v", l)
		}
	case err != nil:
		r.unsupported("policy refused by graphcd: %v", err)
	}
}

// policyRoles returns the role: and proj: subjects the policy lines of
// data name, sorted.
func policyRoles(data map[string]string) []string {
	var roles []string
	for key, v := range data {
		if !strings.HasPrefix(key, "policy.") || !strings.HasSuffix(key, ".csv") {
			continue
		}
		for line := range strings.SplitSeq(v, "\n") {
			for field := range strings.SplitSeq(line, ",") {
				if f := strings.TrimSpace(field); strings.HasPrefix(f, "role:") || strings.HasPrefix(f, "proj:") {
					roles = append(roles, f)
				}
			}
		}
	}
	slices.Sort(roles)
	return slices.Compact(roles)
}

// secretRef matches a value that names a secret, as dex.config and
// oidc.config write them: "$key" or "$secret:key".
var secretRef = regexp.MustCompile(`^\$(?:([a-z0-9]([-a-z0-9.]*[a-z0-9])?):)?([-._a-zA-Z0-9]+)$`)

// secretRefs returns the argocd-secret keys that the SSO settings name
// ("$key"), and the references to other Secrets ("$secret:key").
func secretRefs(data map[string]string) (keys, others []string) {
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case string:
			if m := secretRef.FindStringSubmatch(strings.TrimSpace(v)); m != nil {
				if m[1] == "" {
					keys = append(keys, m[3])
				} else {
					others = append(others, m[1]+":"+m[3])
				}
			}
		}
	}
	for _, key := range []string{"dex.config", "oidc.config"} {
		var v any
		if yaml.Unmarshal([]byte(data[key]), &v) == nil {
			walk(v)
		}
	}
	slices.Sort(keys)
	slices.Sort(others)
	return slices.Compact(keys), slices.Compact(others)
}

// toAny turns a string map into an unstructured one.
func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
