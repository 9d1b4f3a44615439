package appset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/egress"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// Plugin generator limits.
const (
	// maxPluginResponse bounds a plugin's answer.
	maxPluginResponse = 8 << 20
	// defaultPluginTimeout is a plugin call's time when its ConfigMap's
	// requestTimeout says nothing; maxPluginTimeout bounds what it says.
	defaultPluginTimeout = 30 * time.Second
	maxPluginTimeout     = 5 * time.Minute
	// pluginPath is where a plugin answers, as Argo CD asks it.
	pluginPath = "/api/v1/getparams.execute"
)

// PluginSources also give the plugin generator its plugins.
type PluginSources interface {
	Sources
	// CallPlugin posts body to the plugin the ConfigMap configMapRef (in
	// graphcd's namespace) names and returns its answer.
	CallPlugin(configMapRef string, body []byte) ([]byte, error)
}

// errNoPlugins is the plugin generator's error without PluginSources.
var errNoPlugins = errors.New("plugin: no plugins to call")

// pluginGenerator is Argo CD's plugin generator; the CRD keeps it
// schemaless.
type pluginGenerator struct {
	ConfigMapRef struct {
		Name string `json:"name"`
	} `json:"configMapRef"`
	Input struct {
		Parameters map[string]any `json:"parameters,omitempty"`
	} `json:"input"`
	RequeueAfterSeconds *int64                           `json:"requeueAfterSeconds,omitempty"`
	Values              map[string]string                `json:"values,omitempty"`
	Template            *v1alpha1.ApplicationSetTemplate `json:"template,omitempty"`
}

// pluginAnswer is what a plugin returns.
type pluginAnswer struct {
	Output struct {
		Parameters []map[string]any `json:"parameters"`
	} `json:"output"`
}

// plugin returns the parameter sets a plugin answers for the generator's
// input: each with generator.input.parameters, the input it was asked
// with, as Argo CD gives them.
func (s *setRun) plugin(raw []byte) ([]paramSet, error) {
	src, ok := s.sources.(PluginSources)
	if !ok {
		return nil, errNoPlugins
	}
	var g pluginGenerator
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, fmt.Errorf("plugin: %w", err)
	}
	if g.ConfigMapRef.Name == "" {
		return nil, errors.New("plugin: configMapRef.name is required")
	}
	body, err := json.Marshal(map[string]any{"applicationSetName": s.set.Name, "input": map[string]any{"parameters": g.Input.Parameters}})
	if err != nil {
		return nil, fmt.Errorf("plugin: %w", err)
	}
	answer, err := src.CallPlugin(g.ConfigMapRef.Name, body)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", g.ConfigMapRef.Name, err)
	}
	var a pluginAnswer
	if err := json.Unmarshal(answer, &a); err != nil {
		return nil, fmt.Errorf("plugin %s: the answer is not {\"output\": {\"parameters\": [...]}}: %w", g.ConfigMapRef.Name, err)
	}
	if len(a.Output.Parameters) > MaxParams {
		return nil, fmt.Errorf("plugin %s: %d parameter sets, more than %d", g.ConfigMapRef.Name, len(a.Output.Parameters), MaxParams)
	}
	out := make([]paramSet, 0, len(a.Output.Parameters))
	for _, params := range a.Output.Parameters {
		if params == nil {
			params = map[string]any{}
		}
		params["generator"] = map[string]any{"input": map[string]any{"parameters": g.Input.Parameters}}
		if err := s.addValues(params, g.Values); err != nil {
			return nil, fmt.Errorf("plugin %s: %w", g.ConfigMapRef.Name, err)
		}
		out = append(out, paramSet{params: params, template: g.Template})
	}
	return out, nil
}

// CallPlugin reads the plugin's ConfigMap in graphcd's namespace —
// baseUrl, token (a "$key" of graphcd-secret, or "$secret:key" of a
// Secret labelled part of graphcd) and requestTimeout in seconds — and
// posts body to it with the token as a bearer token. Only an admin
// writes that namespace, so a set's author reaches only the plugins an
// admin configured and never learns their tokens.
func (s controllerSources) CallPlugin(configMapRef string, body []byte) ([]byte, error) {
	var cm corev1.ConfigMap
	if err := s.r.client.Get(s.ctx, types.NamespacedName{Namespace: s.r.opts.Namespace, Name: configMapRef}, &cm); err != nil {
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
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
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
	resp, err := s.r.http.Do(req)
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
func (s controllerSources) pluginToken(ref string) (string, error) {
	if !strings.HasPrefix(ref, "$") {
		return ref, nil
	}
	name, key := wellknown.Secret, ref[1:]
	if n, k, ok := strings.Cut(key, ":"); ok {
		name, key = n, k
	}
	var secret corev1.Secret
	if err := s.r.client.Get(s.ctx, types.NamespacedName{Namespace: s.r.opts.Namespace, Name: name}, &secret); err != nil {
		return "", fmt.Errorf("secret %s: %w", name, err)
	}
	v, ok := secret.Data[key]
	if !ok {
		return "", fmt.Errorf("secret %s has no key %q", name, key)
	}
	return strings.TrimSpace(string(v)), nil
}
