package scm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Secrets reads key of the Secret name in the ApplicationSet's namespace
// (a spec's tokenRef, passwordRef or appPasswordRef).
type Secrets func(ctx context.Context, name, key string) (string, error)

// Result is what a generator gives its caller: the parameter sets, and
// the spec's fields the caller applies.
type Result struct {
	// Params are the parameter sets, one per repository and branch or
	// per pull request.
	Params []map[string]any
	// RequeueAfterSeconds is the spec's polling interval; nil when unset.
	RequeueAfterSeconds *int64
	// Template is the generator's template override; nil when unset.
	Template *v1alpha1.ApplicationSetTemplate
	// Values are the generator's values, to render with each set.
	Values map[string]string
}

// secretRef names a key of a Secret (tokenRef, passwordRef ...).
type secretRef struct {
	SecretName string `json:"secretName"`
	Key        string `json:"key"`
}

// basicAuth is a Bitbucket user name and password.
type basicAuth struct {
	Username    string     `json:"username"`
	PasswordRef *secretRef `json:"passwordRef"`
}

// bearerToken is a Bitbucket access token.
type bearerToken struct {
	TokenRef *secretRef `json:"tokenRef"`
}

// common are the fields every generator spec has.
type common struct {
	RequeueAfterSeconds *int64                           `json:"requeueAfterSeconds"`
	Template            *v1alpha1.ApplicationSetTemplate `json:"template"`
	Values              map[string]string                `json:"values"`
	// AzureDevOps and AWSCodeCommit are Argo CD's providers graphcd does
	// not run yet.
	AzureDevOps   json.RawMessage `json:"azureDevOps"`
	AWSCodeCommit json.RawMessage `json:"awsCodeCommit"`
}

// provider returns the name of the one provider a spec sets of those
// graphcd runs (each set or not, in this order) and Argo CD's others.
func (c common) provider(kind string, gitea, github, gitlab, bitbucketServer, bitbucket bool) (string, error) {
	return onlyOne(kind, []provider{
		{name: "gitea", set: gitea}, {name: "github", set: github}, {name: "gitlab", set: gitlab},
		{name: "bitbucketServer", set: bitbucketServer}, {name: "bitbucket", set: bitbucket},
		{name: "azureDevOps", set: c.AzureDevOps != nil, unsupported: true},
		{name: "awsCodeCommit", set: c.AWSCodeCommit != nil, unsupported: true},
	})
}

func (c common) result(params []map[string]any) *Result {
	return &Result{Params: params, RequeueAfterSeconds: c.RequeueAfterSeconds, Template: c.Template, Values: c.Values}
}

// read returns the Secret key ref names, "" for no ref.
func (r *secretRef) read(ctx context.Context, secrets Secrets, field string) (string, error) {
	if r == nil {
		return "", nil
	}
	if r.SecretName == "" || r.Key == "" {
		return "", fmt.Errorf("%s: secretName and key are required", field)
	}
	if secrets == nil {
		return "", fmt.Errorf("%s: no Secrets to read from", field)
	}
	v, err := secrets(ctx, r.SecretName, r.Key)
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	return strings.TrimSpace(v), nil
}

// provider is one provider field of a spec, by its name.
type provider struct {
	name string
	// set is whether the spec sets it.
	set bool
	// unsupported marks a provider Argo CD has and graphcd not yet.
	unsupported bool
}

// onlyOne returns the name of the one provider ps sets, or an error
// naming the supported ones.
func onlyOne(kind string, ps []provider) (string, error) {
	var set, supported []string
	for _, p := range ps {
		if !p.unsupported {
			supported = append(supported, p.name)
		}
	}
	for _, p := range ps {
		if p.set && p.unsupported {
			return "", fmt.Errorf("%s.%s is not supported yet (graphcd supports %s)", kind, p.name, strings.Join(supported, ", "))
		}
		if p.set {
			set = append(set, p.name)
		}
	}
	switch len(set) {
	case 0:
		return "", fmt.Errorf("%s: set one provider of %s", kind, strings.Join(supported, ", "))
	case 1:
		return set[0], nil
	}
	return "", fmt.Errorf("%s sets %s: set only one", kind, strings.Join(set, " and "))
}

// decode unmarshals a generator's JSON into v.
func decode(kind string, raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	return nil
}
