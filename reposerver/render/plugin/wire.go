package plugin

import (
	"github.com/graphcd/graphcd/api/v1alpha1"
)

// The protocol spoken over a plugin's Unix socket is HTTP/1.1:
//
//	GET  /healthz        200 "ok"
//	GET  /v1/plugin      200 pluginInfo
//	POST /v1/generate    multipart/mixed: wireRequest (JSON), repository (tar)
//	                     200 manifests (stdout of generate), or wireError
//	POST /v1/discover    same body; 200 discoverResponse
//	POST /v1/parameters  same body; 200 []ParameterAnnouncement
//
// Every failure is a non-200 status with a wireError body.
const (
	pathHealth     = "/healthz"
	pathInfo       = "/v1/plugin"
	pathGenerate   = "/v1/generate"
	pathDiscover   = "/v1/discover"
	pathParameters = "/v1/parameters"

	contentTypeJSON = "application/json"
	contentTypeTar  = "application/x-tar"
	contentTypeYAML = "application/yaml"

	// maxRequestMeta bounds the JSON part of a request.
	maxRequestMeta = 4 << 20
)

// wireRequest is the first part of a POST body.
type wireRequest struct {
	// AppPath is the app directory, slash-separated, relative to the
	// repository root.
	AppPath string `json:"appPath"`
	// BuildEnv holds Argo CD's build environment (ARGOCD_APP_NAME, ...).
	BuildEnv map[string]string `json:"buildEnv,omitempty"`
	// Env is the application's spec.source.plugin.env, unprefixed.
	Env []v1alpha1.EnvEntry `json:"env,omitempty"`
	// Parameters is the application's spec.source.plugin.parameters.
	Parameters []v1alpha1.ApplicationSourcePluginParameter `json:"parameters,omitempty"`
	// MaxOutput lowers the server's cap on the manifests, when set.
	MaxOutput int64 `json:"maxOutput,omitempty"`
	// RequireMatch makes generate answer codeNoMatch, without running
	// anything, when the plugin has discovery rules and they do not claim
	// the app.
	RequireMatch bool `json:"requireMatch,omitempty"`
}

// pluginInfo describes the plugin behind a socket.
type pluginInfo struct {
	Name      string `json:"name"`
	Discovery bool   `json:"discovery"`
}

// discoverResponse answers /v1/discover.
type discoverResponse struct {
	Match bool `json:"match"`
}

// wireError is the body of every non-200 answer.
type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error codes of wireError.
const (
	codeBadRequest    = "BAD_REQUEST"
	codeTooLarge      = "TOO_LARGE"
	codeTimeout       = "TIMEOUT"
	codeCommandFailed = "COMMAND_FAILED"
	codeNoMatch       = "NO_MATCH"
	codeOutsideRoot   = "OUTSIDE_ROOT"
	codeInternal      = "INTERNAL"
)
