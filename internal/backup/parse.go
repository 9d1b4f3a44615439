package backup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// MaxFile bounds the backup file Parse reads.
const MaxFile = 64 << 20

// Parse decodes a backup file and checks every document before anything
// is written: each must be one object of a backup's kinds, in scope, and
// appear once. Objects without a namespace get scope's. An error names
// the document by its 1-based index and, once known, its kind and name;
// it never quotes a document's content.
func Parse(data []byte, s Scope) ([]*unstructured.Unstructured, error) {
	if len(data) > MaxFile {
		return nil, fmt.Errorf("larger than %d MiB", MaxFile>>20)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*unstructured.Unstructured
	seen := map[string]int{}
	for i := 1; ; i++ {
		chunk, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		j, err := yaml.YAMLToJSON(chunk)
		if err != nil {
			return nil, fmt.Errorf("document %d: not YAML: %w", i, err)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" {
			i--
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(j); err != nil {
			return nil, fmt.Errorf("document %d: not a Kubernetes object: %w", i, err)
		}
		if obj.GetNamespace() == "" {
			obj.SetNamespace(s.Namespace)
		}
		if err := s.admit(obj); err != nil {
			return nil, fmt.Errorf("document %d (%s %q): %w", i, obj.GetKind(), obj.GetName(), err)
		}
		key := objectKey(obj)
		if first, dup := seen[key]; dup {
			return nil, fmt.Errorf("document %d (%s %q): the same object as document %d", i, obj.GetKind(), obj.GetName(), first)
		}
		seen[key] = i
		objs = append(objs, obj)
	}
	slices.SortStableFunc(objs, rank)
	return objs, nil
}

// admit checks that obj is an object a backup holds, in scope.
func (s Scope) admit(obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	k, ok := kindOf(gvk)
	if !ok {
		return fmt.Errorf("apiVersion %q kind %q is not imported: a backup holds v1 ConfigMaps and Secrets and graphcd.io/v1alpha1 AppProjects, Applications and ApplicationSets", obj.GetAPIVersion(), gvk.Kind)
	}
	if obj.GetName() == "" {
		return errors.New("no metadata.name")
	}
	if !s.served(k, obj.GetNamespace()) {
		return fmt.Errorf("namespace %q is not graphcd's namespace %q or one it serves (--application-namespaces)", obj.GetNamespace(), s.Namespace)
	}
	switch k {
	case configMapKind:
		if !slices.Contains(s.ConfigMaps, obj.GetName()) {
			return fmt.Errorf("not a settings ConfigMap (%v)", s.ConfigMaps)
		}
	case secretKind:
		if !isSecretTyped(obj.GetLabels()) && !slices.Contains(s.Secrets, obj.GetName()) {
			return fmt.Errorf("not a repository, credential template or cluster Secret (no secret-type label) nor one of %v", s.Secrets)
		}
	}
	return nil
}

// objectKey identifies an object among a backup's.
func objectKey(o *unstructured.Unstructured) string {
	return o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
}
