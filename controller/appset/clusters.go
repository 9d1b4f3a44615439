package appset

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Cluster is a registered destination cluster as the clusters generator
// sees it: a cluster Secret's fields, labels and annotations.
type Cluster struct {
	Name, Server, Project string
	Labels, Annotations   map[string]string
}

// Sources give the generators what lives outside the set.
type Sources interface {
	// Clusters lists the registered clusters.
	Clusters() ([]Cluster, error)
}

// errNoClusters is the clusters generator's error without Sources.
var errNoClusters = errors.New("clusters: no cluster list to generate from")

// clusters returns one parameter set per cluster whose labels match
// the selector, or one set listing them all with flatList.
func (s *setRun) clusters(g *v1alpha1.ClusterGenerator) ([]paramSet, error) {
	if s.sources == nil {
		return nil, errNoClusters
	}
	all, err := s.sources.Clusters()
	if err != nil {
		return nil, fmt.Errorf("clusters: %w", err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&g.Selector)
	if err != nil {
		return nil, fmt.Errorf("clusters: selector: %w", err)
	}
	var out []paramSet
	var flat []any
	for _, c := range all {
		if !sel.Matches(labels.Set(c.Labels)) {
			continue
		}
		params := map[string]any{
			"name": c.Name, "nameNormalized": normalize(c.Name), "server": c.Server, "project": c.Project,
			"metadata": map[string]any{"labels": stringMap(c.Labels), "annotations": clusterAnnotations(c.Annotations)},
		}
		if err := s.addValues(params, g.Values); err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
		if g.FlatList {
			flat = append(flat, params)
			continue
		}
		out = append(out, paramSet{params: params, template: g.Template})
	}
	if g.FlatList {
		return []paramSet{{params: map[string]any{"clusters": flat}, template: g.Template}}, nil
	}
	return out, nil
}

// addValues sets params["values"] to values, each rendered with params
// (a generator's values field); none leaves params as they are.
func (s *setRun) addValues(params map[string]any, values map[string]string) error {
	if len(values) == 0 {
		return nil
	}
	out := make(map[string]any, len(values))
	for k, v := range values {
		rendered, err := s.r.field(v, params)
		if err != nil {
			return fmt.Errorf("values.%s: %w", k, err)
		}
		out[k] = rendered
	}
	params["values"] = out
	return nil
}

// lastApplied is kubectl's copy of an object applied client-side: on a
// cluster Secret it holds the credentials.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// clusterAnnotations are a cluster Secret's annotations as parameters,
// without kubectl's last-applied copy of the Secret: parameters reach
// Applications and the set's status.
func clusterAnnotations(m map[string]string) map[string]any {
	out := stringMap(m)
	delete(out, lastApplied)
	return out
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
