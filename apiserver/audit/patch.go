package audit

import (
	"bytes"
	"encoding/json"
	"strings"

	"gomodules.xyz/jsonpatch/v2"

	"github.com/graphcd/graphcd/internal/repourl"
)

// Redacted replaces every Secret value and credential in a patch.
const Redacted = "<redacted>"

// credentialFields are the field names whose values are credentials in
// any kind of object (compared in lower case): repository and cluster
// credentials, tokens and keys.
var credentialFields = map[string]bool{
	"password": true, "token": true, "bearertoken": true, "accesstoken": true, "refreshtoken": true,
	"sshprivatekey": true, "privatekey": true, "tlsclientcertkey": true, "keydata": true,
	"clientsecret": true, "secret": true, "apikey": true, "githubappprivatekey": true,
	"gcpserviceaccountkey": true, "secretaccesskey": true,
}

// lastApplied is kubectl's copy of the object it applied, which for a
// Secret holds its data.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// volatile are metadata fields every write changes, left out of patches.
var volatile = []string{"resourceVersion", "generation", "managedFields"}

// diff returns the RFC 6902 JSON patch from before to after (either nil
// for a create or delete) with Secret values and credentials replaced by
// Redacted.
func diff(kind string, before, after []byte) ([]byte, error) {
	b, err := normalise(before)
	if err != nil {
		return nil, err
	}
	a, err := normalise(after)
	if err != nil {
		return nil, err
	}
	var ops []jsonpatch.Operation
	switch {
	case b == nil && a == nil:
		return nil, nil
	case b == nil:
		ops = []jsonpatch.Operation{{Operation: "add", Path: "", Value: decode(a)}}
	case a == nil:
		ops = []jsonpatch.Operation{{Operation: "remove", Path: ""}}
	default:
		if ops, err = jsonpatch.CreatePatch(b, a); err != nil {
			return nil, err
		}
	}
	for i := range ops {
		if ops[i].Value != nil {
			ops[i].Value = redact(kind, splitPointer(ops[i].Path), ops[i].Value)
		}
	}
	// Plain maps, so that "<redacted>" reads as it is, not as
	// \u003credacted\u003e (jsonpatch's own encoding escapes it).
	out := make([]map[string]any, 0, len(ops))
	for _, op := range ops {
		m := map[string]any{"op": op.Operation, "path": op.Path}
		if op.Operation != "remove" {
			m["value"] = op.Value
		}
		out = append(out, m)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// normalise drops the volatile metadata from an object's JSON.
func normalise(doc []byte) ([]byte, error) {
	if doc == nil {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, err
	}
	if meta, ok := m["metadata"].(map[string]any); ok {
		for _, k := range volatile {
			delete(meta, k)
		}
	}
	return json.Marshal(m)
}

func decode(doc []byte) any {
	var v any
	_ = json.Unmarshal(doc, &v)
	return v
}

// splitPointer splits a JSON pointer into its unescaped tokens.
func splitPointer(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}

// redact returns v, found at path in an object of kind, with every value
// at a sensitive path replaced by Redacted (maps keep their keys) and the
// credentials of URLs elsewhere masked (see redactURL).
func redact(kind string, path []string, v any) any {
	if sensitive(kind, path) {
		return redactAll(v)
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = redact(kind, append(path[:len(path):len(path)], k), x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = redact(kind, append(path[:len(path):len(path)], "-"), x)
		}
		return out
	case string:
		return redactURL(t)
	}
	return v
}

// redactURL masks the credentials of the URLs in s ("https://user:token@
// host/...", an application's repoURL, say): any field may hold one.
func redactURL(s string) string {
	if !strings.Contains(s, "@") || !strings.Contains(s, "://") {
		return s
	}
	return repourl.Redact(s)
}

// redactAll replaces every leaf of v.
func redactAll(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = redactAll(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = redactAll(x)
		}
		return out
	case nil:
		return nil
	}
	return Redacted
}

// sensitive reports whether the value at path of an object of kind is
// secret: a Secret's data, stringData and kubectl's copy of them, and any
// field named as a credential.
func sensitive(kind string, path []string) bool {
	if len(path) == 0 {
		return false
	}
	if kind == "Secret" {
		if len(path) >= 2 && (path[0] == "data" || path[0] == "stringData") {
			return true
		}
		if len(path) >= 3 && path[0] == "metadata" && path[1] == "annotations" && path[2] == lastApplied {
			return true
		}
	}
	return credentialFields[strings.ToLower(path[len(path)-1])]
}
