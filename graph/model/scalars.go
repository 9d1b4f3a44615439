package model

// The GraphQL scalars that are bound to Kubernetes Go types (gqlgen finds
// the MarshalX and UnmarshalX functions here by name; see gqlgen.yml).

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MarshalTime writes t as an RFC 3339 string in UTC with second
// precision, the form Kubernetes stores.
func MarshalTime(t metav1.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(t.UTC().Format(time.RFC3339)))
	})
}

// UnmarshalTime reads an RFC 3339 string.
func UnmarshalTime(v any) (metav1.Time, error) {
	s, ok := v.(string)
	if !ok {
		return metav1.Time{}, fmt.Errorf("time must be an RFC 3339 string, got %T", v)
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return metav1.Time{}, fmt.Errorf("time must be an RFC 3339 string such as 2026-01-02T15:04:05Z, got %q", s)
	}
	return metav1.NewTime(t), nil
}

// MarshalStdTime writes t like MarshalTime, for fields of type time.Time.
func MarshalStdTime(t time.Time) graphql.Marshaler { return MarshalTime(metav1.NewTime(t)) }

// UnmarshalStdTime reads an RFC 3339 string.
func UnmarshalStdTime(v any) (time.Time, error) {
	t, err := UnmarshalTime(v)
	return t.Time, err
}
