package appset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/appset/scm"
	"github.com/graphcd/graphcd/internal/egress"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// KubeSources give the generators of one set what they read from
// Kubernetes and beyond it: the duck-typed resources of
// clusterDecisionResource generators, the plugins, and the forges of the
// SCM provider and pull request generators. The controller's sources are
// these and more; the API's preview reads through the same.
type KubeSources struct {
	Ctx context.Context
	// Client lists the duck-typed resources.
	Client client.Client
	// Reader reads ConfigMaps and Secrets (the controller's reads past
	// its cache, which keeps no Secret for this).
	Reader client.Reader
	// Namespace is graphcd's: the plugins' and duck types' ConfigMaps,
	// and the plugins' tokens.
	Namespace string
	Set       *v1alpha1.ApplicationSet
	// HTTP asks plugins and forges; Insecure asks the forges of specs
	// with insecure: true.
	HTTP, Insecure *http.Client
	Forges         ForgePolicy
}

// NewHTTPClients are the clients KubeSources ask with under graphcd's
// egress rules: one that verifies certificates and one that does not.
func NewHTTPClients() (verified, insecure *http.Client) {
	return egress.New(egress.Options{}).HTTPClient(), egress.New(egress.Options{InsecureSkipVerify: true}).HTTPClient()
}

// Decisions reads the duck-typed resources a clusterDecisionResource
// generator names, in the set's namespace, as its ConfigMap (in graphcd's
// namespace) describes them.
func (s KubeSources) Decisions(configMapRef, name string, selector *metav1.LabelSelector) (string, []map[string]any, error) {
	var cm corev1.ConfigMap
	if err := s.Reader.Get(s.Ctx, types.NamespacedName{Namespace: s.Namespace, Name: configMapRef}, &cm); err != nil {
		return "", nil, fmt.Errorf("ConfigMap %s: %w", configMapRef, err)
	}
	apiVersion, resource, listKey, matchKey := cm.Data["apiVersion"], cm.Data["kind"], cm.Data["statusListKey"], cm.Data["matchKey"]
	if apiVersion == "" || resource == "" || listKey == "" || matchKey == "" {
		return "", nil, fmt.Errorf("ConfigMap %s: apiVersion, kind, statusListKey and matchKey are all required", configMapRef)
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return "", nil, fmt.Errorf("ConfigMap %s: apiVersion: %w", configMapRef, err)
	}
	gvk, err := s.Client.RESTMapper().KindFor(gv.WithResource(resource))
	if err != nil {
		return "", nil, fmt.Errorf("ConfigMap %s: %w", configMapRef, err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{client.InNamespace(s.Set.Namespace)}
	if name == "" {
		sel, err := metav1.LabelSelectorAsSelector(selector)
		if err != nil {
			return "", nil, fmt.Errorf("labelSelector: %w", err)
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	if err := s.Client.List(s.Ctx, list, opts...); err != nil {
		return "", nil, fmt.Errorf("list %s: %w", resource, err)
	}
	var out []map[string]any
	for _, item := range list.Items {
		if name != "" && item.GetName() != name {
			continue
		}
		entries, _, err := unstructured.NestedSlice(item.Object, "status", listKey)
		if err != nil {
			return "", nil, fmt.Errorf("%s %s: status.%s: %w", resource, item.GetName(), listKey, err)
		}
		for _, e := range entries {
			if m, ok := e.(map[string]any); ok && len(out) <= MaxParams {
				out = append(out, m)
			}
		}
	}
	return matchKey, out, nil
}

// CallPlugin reads the plugin's ConfigMap in graphcd's namespace —
// baseUrl, token (a "$key" of graphcd-secret, or "$secret:key" of a
// Secret labelled part of graphcd) and requestTimeout in seconds — and
// posts body to it with the token as a bearer token. Only an admin
// writes that namespace, so a set's author reaches only the plugins an
// admin configured and never learns their tokens.
func (s KubeSources) CallPlugin(configMapRef string, body []byte) ([]byte, error) {
	var cm corev1.ConfigMap
	if err := s.Reader.Get(s.Ctx, types.NamespacedName{Namespace: s.Namespace, Name: configMapRef}, &cm); err != nil {
		return nil, fmt.Errorf("ConfigMap %s: %w", configMapRef, err)
	}
	base, err := url.Parse(strings.TrimSpace(cm.Data["baseUrl"]))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("ConfigMap %s: baseUrl must be an http or https URL", configMapRef)
	}
	timeout := defaultPluginTimeout
	if v := cm.Data["requestTimeout"]; v != "" {
		secs, err := strconv.Atoi(v)
		if err != nil || secs <= 0 {
			return nil, fmt.Errorf("ConfigMap %s: requestTimeout %q is not a positive number of seconds", configMapRef, v)
		}
		timeout = min(time.Duration(secs)*time.Second, maxPluginTimeout)
	}
	token, err := s.pluginToken(cm.Data["token"])
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s: token: %w", configMapRef, err)
	}
	ctx, cancel := context.WithTimeout(s.Ctx, timeout)
	defer cancel()
	endpoint := base.JoinPath(pluginPath)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.HTTP.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%s: %w", endpoint.Redacted(), err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", endpoint.Redacted(), resp.Status)
	}
	data, err := egress.ReadBody(resp, maxPluginResponse)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", endpoint.Redacted(), err)
	}
	return data, nil
}

// pluginToken resolves a plugin ConfigMap's token: "$key" is a key of
// graphcd-secret and "$secret:key" a key of that Secret, both in graphcd's
// namespace, as the other settings' references; anything else is the
// token itself.
func (s KubeSources) pluginToken(ref string) (string, error) {
	if !strings.HasPrefix(ref, "$") {
		return ref, nil
	}
	name, key := wellknown.Secret, ref[1:]
	if n, k, ok := strings.Cut(key, ":"); ok {
		name, key = n, k
	}
	var secret corev1.Secret
	if err := s.Reader.Get(s.Ctx, types.NamespacedName{Namespace: s.Namespace, Name: name}, &secret); err != nil {
		return "", fmt.Errorf("secret %s: %w", name, err)
	}
	v, ok := secret.Data[key]
	if !ok {
		return "", fmt.Errorf("secret %s has no key %q", name, key)
	}
	return strings.TrimSpace(string(v)), nil
}

// Forge reads tokens from the Secrets of the set's namespace (as Argo
// CD) and asks only the forges the policy allows, through the egress
// rules' clients.
func (s KubeSources) Forge() (context.Context, scm.Secrets, scm.Options) {
	secrets := func(ctx context.Context, name, key string) (string, error) {
		var secret corev1.Secret
		if err := s.Reader.Get(ctx, types.NamespacedName{Namespace: s.Set.Namespace, Name: name}, &secret); err != nil {
			return "", fmt.Errorf("secret %s: %w", name, err)
		}
		v, ok := secret.Data[key]
		if !ok {
			return "", fmt.Errorf("secret %s has no key %q", name, key)
		}
		return string(v), nil
	}
	client := func(insecure bool) *http.Client {
		if insecure {
			return s.Insecure
		}
		return s.HTTP
	}
	return s.Ctx, secrets, scm.Options{Client: client, Allow: s.Forges.check}
}
