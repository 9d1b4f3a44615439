package model

import (
	"encoding/base64"
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Kinds of object that have global IDs.
const (
	KindApplication = "Application"
)

// ErrBadID is returned for an ID graphcd did not issue.
var ErrBadID = errors.New("invalid ID")

// maxIDLen bounds an ID before decoding; real ones are far shorter.
const maxIDLen = 1024

// NodeID returns the global ID of the object of kind at key. IDs are
// base64url of "kind:namespace/name", opaque to clients.
func NodeID(kind string, key types.NamespacedName) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + key.Namespace + "/" + key.Name))
}

// ParseID returns the kind and key of a global ID, or ErrBadID.
func ParseID(id string) (kind string, key types.NamespacedName, err error) {
	if len(id) > maxIDLen {
		return "", key, ErrBadID
	}
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil {
		return "", key, ErrBadID
	}
	kind, rest, ok := strings.Cut(string(b), ":")
	if !ok || kind == "" {
		return "", key, ErrBadID
	}
	ns, name, ok := strings.Cut(rest, "/")
	if !ok || name == "" {
		return "", key, ErrBadID
	}
	return kind, types.NamespacedName{Namespace: ns, Name: name}, nil
}

// Node is an object with a global ID (the schema's Node interface).
type Node interface {
	ID() string
}
