package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// lineError is an error at a line inside one settings value (1-based).
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.line, e.err) }

var yamlLine = regexp.MustCompile(`line (\d+): `)

// decodeYAML decodes one settings value into out. Structs with a yaml tag
// per field reject unknown fields where Argo CD's format is closed.
func decodeYAML(v string, out any) error {
	dec := yaml.NewDecoder(strings.NewReader(v))
	dec.KnownFields(strict(out))
	if err := dec.Decode(out); err != nil && !errors.Is(err, io.EOF) {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
		if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
			n, _ := strconv.Atoi(msg[m[2]:m[3]])
			return &lineError{line: n, err: errors.New(strings.TrimSpace(msg[:m[0]] + msg[m[1]:]))}
		}
		return errors.New(msg)
	}
	return nil
}

// strict reports whether out's format is closed (unknown fields are typos).
func strict(out any) bool {
	switch out.(type) {
	case *IgnoreDifferences, *[]ResourceFilter, *Actions:
		return true
	}
	return false
}

// unline drops the line of an error found in a nested value, whose lines
// don't count from the start of the key.
func unline(err error) error {
	var le *lineError
	if errors.As(err, &le) {
		return le.err
	}
	return err
}

// ParseConfigMap parses a ConfigMap manifest (YAML or JSON) in the
// graphcd-cm format; an Argo CD argocd-cm works as it is. Errors give the
// line in the file.
func ParseConfigMap(manifest []byte) (*Settings, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(manifest)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("settings file is empty")
		}
		return nil, fmt.Errorf("settings file: %w", err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("settings file line %d: want a ConfigMap object", root.Line)
	}
	var kind string
	var dataNode *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "kind":
			kind = root.Content[i+1].Value
		case "data":
			dataNode = root.Content[i+1]
		}
	}
	if kind != "ConfigMap" {
		return nil, fmt.Errorf("settings file: kind is %q, want ConfigMap", kind)
	}
	data := map[string]string{}
	lines := map[string]int{}
	if dataNode != nil {
		if dataNode.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("settings file line %d: data must be a map of strings", dataNode.Line)
		}
		for i := 0; i+1 < len(dataNode.Content); i += 2 {
			k, v := dataNode.Content[i], dataNode.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("settings file line %d: data key %q must hold a string", v.Line, k.Value)
			}
			data[k.Value] = v.Value
			// A block scalar (| or >) starts on the line after its indicator.
			line := v.Line
			if v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
				line++
			}
			lines[k.Value] = line
		}
	}
	return parse(data, lines)
}
