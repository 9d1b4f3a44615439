package migration

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/internal/wellknown"
)

// carriedSecretKey matches the argocd-secret keys graphcd reads in its own
// Secret: password hashes and webhook secrets.
var carriedSecretKey = regexp.MustCompile(`^(admin|accounts\.[^.]+)\.(password|passwordMtime)$|^webhook\.`)

// leftSecretKeys are argocd-secret keys that are not copied, and why.
var leftSecretKeys = []struct {
	key *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`^server\.secretkey$`), "graphcd signs sessions with its own key: users log in again"},
	{regexp.MustCompile(`^(admin|accounts\.[^.]+)\.tokens$`), "tokens Argo CD issued do not verify in graphcd: issue new ones (createAccountToken)"},
	{regexp.MustCompile(`^tls\.(crt|key)$`), "graphcd serves its own certificate"},
}

// unsupportedCredentialKeys are repository and cluster Secret keys graphcd
// does not read.
var unsupportedCredentialKeys = map[string]string{
	"githubAppID":                "GitHub App credentials",
	"githubAppInstallationID":    "GitHub App credentials",
	"githubAppPrivateKey":        "GitHub App credentials",
	"githubAppEnterpriseBaseUrl": "GitHub App credentials",
	"gcpServiceAccountKey":       "Google Cloud credentials",
	"proxy":                      "repository proxies",
	"noProxy":                    "repository proxies",
}

// secrets converts argocd-secret, the notifications Secret and the
// repository, credential template and cluster Secrets. Values are copied,
// never reported.
func (c *converter) secrets() {
	for _, from := range c.src.Secrets {
		r := &Object{From: describe(from)}
		data, _, _ := unstructured.NestedStringMap(from.Object, "data")
		switch name := from.GetName(); {
		case from.GetLabels()[wellknown.ArgoSecretTypeLabel] != "":
			c.credentials(from, data, r)
		case name == ArgoSecret:
			c.argoSecret(from, data, r)
		default:
			to, ok := c.opts.Secrets[name]
			if !ok {
				r.unsupported("graphcd has no such Secret")
				c.add(r, nil)
				continue
			}
			r.same("%d key(s) %v, values not shown", len(data), slices.Sorted(maps.Keys(data)))
			c.add(r, secret(from, to, c.opts.Namespace, data, true, r))
		}
	}
}

// secret returns graphcd's Secret named to with data; withMeta keeps the
// Argo CD Secret's labels and annotations.
func secret(from *unstructured.Unstructured, to, namespace string, data map[string]string, withMeta bool, r *Object) *unstructured.Unstructured {
	obj := newObject(from, "v1", namespace, to, r)
	if !withMeta {
		obj.SetLabels(nil)
		obj.SetAnnotations(nil)
	}
	t, _, _ := unstructured.NestedString(from.Object, "type")
	if t == "" {
		t = "Opaque"
	}
	obj.Object["type"] = t
	obj.Object["data"] = toAny(data)
	return obj
}

// argoSecret copies into graphcd's Secret the keys graphcd reads there,
// merged with what graphcd keeps in it (its session key).
func (c *converter) argoSecret(from *unstructured.Unstructured, data map[string]string, r *Object) {
	to, ok := c.opts.Secrets[ArgoSecret]
	if !ok {
		r.unsupported("graphcd has no such Secret")
		c.add(r, nil)
		return
	}
	var cmData map[string]string
	if cm := c.src.ConfigMaps[ArgoSettingsConfigMap]; cm != nil {
		cmData, _, _ = unstructured.NestedStringMap(cm.Object, "data")
	}
	refs, others := secretRefs(cmData)
	out := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(data)) {
		if carriedSecretKey.MatchString(key) || slices.Contains(refs, key) {
			out[key] = data[key]
			r.same("%s (copied, value not shown)", key)
			continue
		}
		why := "no graphcd setting refers to it"
		for _, l := range leftSecretKeys {
			if l.key.MatchString(key) {
				why = l.why
			}
		}
		r.unsupported("%s: not copied; %s", key, why)
	}
	for _, ref := range refs {
		if _, ok := data[ref]; !ok {
			r.unsupported("$%s: the SSO settings name it but %s has no such key", ref, ArgoSecret)
		}
	}
	for _, ref := range others {
		name, _, _ := strings.Cut(ref, ":")
		r.unsupported("$%s: the SSO settings name Secret %s; copy it into namespace %s", ref, name, c.opts.Namespace)
	}
	r.change("keys merged into %s by server-side apply; graphcd's own keys stay", to)
	c.add(r, secret(from, to, c.opts.Namespace, out, false, r))
}

// credentials copies a repository, credential template or cluster Secret
// under its name; graphcd reads Argo CD's label and keys.
func (c *converter) credentials(from *unstructured.Unstructured, data map[string]string, r *Object) {
	r.same("label %s=%s, keys %v (values not shown)", wellknown.ArgoSecretTypeLabel, from.GetLabels()[wellknown.ArgoSecretTypeLabel], slices.Sorted(maps.Keys(data)))
	for _, key := range slices.Sorted(maps.Keys(data)) {
		if what, ok := unsupportedCredentialKeys[key]; ok {
			r.unsupported("%s: graphcd does not read %s", key, what)
		}
	}
	if raw, ok := data["config"]; ok {
		var cfg map[string]any
		if b, err := base64.StdEncoding.DecodeString(raw); err == nil && json.Unmarshal(b, &cfg) == nil {
			if _, aws := cfg["awsAuthConfig"]; aws {
				r.unsupported("config.awsAuthConfig: graphcd refuses it; run aws eks get-token as execProviderConfig")
			}
		}
	}
	c.add(r, secret(from, from.GetName(), c.opts.Namespace, data, true, r))
}
