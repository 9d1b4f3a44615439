package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
)

// User environment variables reach plugin commands only under these
// prefixes, so an Application can never set PATH, LD_PRELOAD and the like.
const (
	ArgoCDEnvPrefix  = "ARGOCD_ENV_"
	GraphCDEnvPrefix = "GRAPHCD_ENV_"
)

// defaultPath is the PATH commands get when the server has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// envSpec is everything a command's environment is made of.
type envSpec struct {
	path       string          // PATH
	home       string          // HOME and TMPDIR: a directory of this call
	passed     []string        // NAME=value pairs the operator passes through from the server
	build      render.BuildEnv // build environment; names from render.BuildEnvNames only
	user       []v1alpha1.EnvEntry
	parameters []v1alpha1.ApplicationSourcePluginParameter
}

// environ builds a command's environment from scratch; nothing of the
// server's own environment enters it except PATH and what the operator
// listed to pass through.
func (s envSpec) environ() ([]string, error) {
	env := map[string]string{}
	for _, kv := range s.passed {
		name, value, _ := strings.Cut(kv, "=")
		env[name] = value
	}
	path := s.path
	if path == "" {
		path = defaultPath
	}
	env["PATH"] = path
	env["HOME"] = s.home
	env["TMPDIR"] = s.home

	for name, value := range s.build {
		if !slices.Contains(render.BuildEnvNames, name) {
			return nil, fmt.Errorf("build environment variable %q is not one of Argo CD's", name)
		}
		if err := checkEnvValue(name, value); err != nil {
			return nil, err
		}
		env[name] = value
	}

	for _, e := range s.user {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
			return nil, fmt.Errorf("plugin env name %q: must be non-empty without '=' or NUL", e.Name)
		}
		v := s.build.Expand(e.Value)
		if err := checkEnvValue(e.Name, v); err != nil {
			return nil, err
		}
		env[ArgoCDEnvPrefix+e.Name] = v
		env[GraphCDEnvPrefix+e.Name] = v
	}

	if len(s.parameters) > 0 {
		params, err := json.Marshal(s.parameters)
		if err != nil {
			return nil, fmt.Errorf("encode parameters: %w", err)
		}
		env["ARGOCD_APP_PARAMETERS"] = string(params)
		for _, p := range s.parameters {
			for name, value := range paramEnv(p) {
				if err := checkEnvValue(p.Name, value); err != nil {
					return nil, err
				}
				env[name] = value
			}
		}
	}

	out := make([]string, 0, len(env))
	for name, value := range env {
		out = append(out, name+"="+value)
	}
	slices.Sort(out)
	return out, nil
}

func checkEnvValue(name, value string) error {
	if strings.ContainsRune(value, 0) {
		return fmt.Errorf("value of %q contains NUL", name)
	}
	return nil
}

// paramEnv names one parameter's variables as Argo CD does:
// PARAM_<NAME> for a string, PARAM_<NAME>_<i> for array items and
// PARAM_<NAME>_<KEY> for map entries, names upper-cased with every
// character other than A-Z, 0-9 and _ replaced by _.
func paramEnv(p v1alpha1.ApplicationSourcePluginParameter) map[string]string {
	base := "PARAM_" + envName(p.Name)
	out := map[string]string{}
	if p.String != nil {
		out[base] = *p.String
	}
	for i, v := range p.Array {
		out[base+"_"+strconv.Itoa(i)] = v
	}
	for k, v := range p.Map {
		out[base+"_"+envName(k)] = v
	}
	return out
}

func envName(s string) string {
	b := []byte(strings.ToUpper(s))
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			b[i] = '_'
		}
	}
	return string(b)
}

// passEnv returns NAME=value for each listed variable set in the server's
// environment.
func passEnv(names []string) []string {
	var out []string
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok && n != "" && !strings.Contains(n, "=") {
			out = append(out, n+"="+v)
		}
	}
	return out
}
