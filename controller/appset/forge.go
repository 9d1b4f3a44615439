package appset

import (
	"context"
	"errors"
	"fmt"

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
