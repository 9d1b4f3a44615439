package diff

// YAML renders obj as block YAML with sorted keys, in the form the
// unified diffs of Result.Text use, so that a viewer showing an object
// beside its diff shows the same lines. It is several times faster than
// sigs.k8s.io/yaml, which goes through JSON and a YAML parser.
func YAML(obj map[string]any) []byte {
	return encodeYAML(obj)
}
