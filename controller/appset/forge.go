package appset

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/controller/appset/scm"
)

// ForgeSources also give the SCM provider and pull request generators
// their forges.
type ForgeSources interface {
	Sources
	// Forge returns the context of the generation, the reader of the
	// set's Secrets and the options forges are asked with.
	Forge() (context.Context, scm.Secrets, scm.Options)
}

// errNoForges is the SCM provider and pull request generators' error
// without ForgeSources.
var errNoForges = errors.New("no forges to ask")

// forge runs an SCM provider or pull request generator (run) on its
// spec raw: the forge's repositories or pull requests, each with the
// generator's values.
func (s *setRun) forge(name string, raw []byte, run func(context.Context, []byte, bool, scm.Secrets, scm.Options) (*scm.Result, error)) ([]paramSet, error) {
	src, ok := s.sources.(ForgeSources)
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, errNoForges)
	}
	ctx, secrets, opts := src.Forge()
	res, err := run(ctx, raw, s.r.goTemplate, secrets, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make([]paramSet, 0, len(res.Params))
	for _, params := range res.Params {
		if err := s.addValues(params, res.Values); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, paramSet{params: params, template: res.Template})
	}
	return out, nil
}

// Forge reads tokens from the Secrets of the set's namespace (as Argo
// CD) and asks only the forges the policy allows, through the egress
// rules' clients.
func (s controllerSources) Forge() (context.Context, scm.Secrets, scm.Options) {
	secrets := func(ctx context.Context, name, key string) (string, error) {
		var secret corev1.Secret
		if err := s.r.client.Get(ctx, types.NamespacedName{Namespace: s.set.Namespace, Name: name}, &secret); err != nil {
			return "", fmt.Errorf("secret %s: %w", name, err)
		}
		v, ok := secret.Data[key]
		if !ok {
			return "", fmt.Errorf("secret %s has no key %q", name, key)
		}
		return string(v), nil
	}
	return s.ctx, secrets, scm.Options{Client: s.r.httpClient, Allow: s.r.opts.Forges.check}
}
