package appset

import (
	"errors"
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// DecisionSources also give the clusterDecisionResource generator its
// decisions.
type DecisionSources interface {
	Sources
	// Decisions reads the ConfigMap configMapRef and returns its matchKey
	// and the entries of the status lists of the resources it names that
	// are called name or match selector.
	Decisions(configMapRef, name string, selector *metav1.LabelSelector) (matchKey string, decisions []map[string]any, err error)
}

// errNoDecisions is the clusterDecisionResource generator's error without
// DecisionSources.
var errNoDecisions = errors.New("clusterDecisionResource: no resources to read")

// duckType returns one parameter set per decision that names a
// registered cluster: the decision's fields, the cluster's name and
// server, and values. Decisions naming no cluster are left out, as in
// Argo CD.
func (s *setRun) duckType(g *v1alpha1.DuckTypeGenerator) ([]paramSet, error) {
	src, ok := s.sources.(DecisionSources)
	if !ok {
		return nil, errNoDecisions
	}
	if g.ConfigMapRef == "" {
		return nil, errors.New("clusterDecisionResource: configMapRef is required")
	}
	if g.Name == "" && len(g.LabelSelector.MatchLabels) == 0 && len(g.LabelSelector.MatchExpressions) == 0 {
		return nil, errors.New("clusterDecisionResource: set name or labelSelector")
	}
	matchKey, decisions, err := src.Decisions(g.ConfigMapRef, g.Name, &g.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("clusterDecisionResource: %w", err)
	}
	if len(decisions) > MaxParams {
		return nil, fmt.Errorf("clusterDecisionResource: %d decisions, more than %d", len(decisions), MaxParams)
	}
	all, err := src.Clusters()
	if err != nil {
		return nil, fmt.Errorf("clusterDecisionResource: %w", err)
	}
	byName := make(map[string]Cluster, len(all))
	for _, c := range all {
		byName[c.Name] = c
	}
	var out []paramSet
	for _, d := range decisions {
		key, _ := d[matchKey].(string)
		c, ok := byName[key]
		if !ok {
			continue
		}
		params := maps.Clone(d)
		params["name"], params["server"] = c.Name, c.Server
		if err := s.addValues(params, g.Values); err != nil {
			return nil, fmt.Errorf("clusterDecisionResource: %w", err)
		}
		out = append(out, paramSet{params: params, template: g.Template})
	}
	return out, nil
}
