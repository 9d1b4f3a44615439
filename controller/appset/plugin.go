package appset

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/graphcd/graphcd/api/v1alpha1"
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
