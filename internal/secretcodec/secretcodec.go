// Package secretcodec reads and writes the Secrets that declare
// repositories, repository credential templates and destination clusters,
// in Argo CD's format, so that an Argo CD Secret carries over and what
// graphcd writes Argo CD reads:
//
//	metadata:
//	  labels:
//	    graphcd.io/secret-type: repository   # repo-creds, repository-write, repo-write-creds, cluster;
//	                                         # or argocd.argoproj.io/secret-type
//	stringData:
//	  url: https://github.com/org/private
//	  username: bot
//	  password: ghp_...
//
// Every reader (the cluster registry, the credential store) and writer
// (secretops) of those Secrets goes through it: their keys, the cluster
// "config" JSON and the normal form of a cluster's server URL are declared
// here only. Errors name the Secret and the key, never a value.
package secretcodec

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/graphcd/graphcd/internal/wellknown"
)

// The values of the secret-type label (wellknown.SecretTypeLabel, or
// Argo CD's).
//
//nolint:gosec // G101: label values, not credentials
const (
	TypeRepository = "repository"
	TypeRepoCreds  = "repo-creds"
	TypeCluster    = "cluster"
	// TypeRepositoryWrite and TypeRepoWriteCreds are the write
	// credentials of a repository and their templates, as Argo CD's
	// source hydrator reads them: only they push, never the credentials
	// of the read types above.
	TypeRepositoryWrite = "repository-write"
	TypeRepoWriteCreds  = "repo-write-creds"
)

// Type is the secret type sec declares: under graphcd's label, else under
// Argo CD's; "" for neither.
func Type(sec *corev1.Secret) string {
	if t := sec.Labels[wellknown.SecretTypeLabel]; t != "" {
		return t
	}
	return sec.Labels[wellknown.ArgoSecretTypeLabel]
}

// Data is the Secret's data and stringData merged (stringData wins, as
// the API server would when it writes the Secret).
func Data(sec *corev1.Secret) map[string]string {
	out := make(map[string]string, len(sec.Data)+len(sec.StringData))
	for k, v := range sec.Data {
		out[k] = string(v)
	}
	for k, v := range sec.StringData {
		out[k] = v
	}
	return out
}

// Project is the project a repository or cluster Secret is scoped to
// (its key "project"), "" for a global one.
func Project(sec *corev1.Secret) string {
	return strings.TrimSpace(Data(sec)["project"])
}

// keyError is a problem with one key of a Secret.
func keyError(sec *corev1.Secret, kind, format string, args ...any) error {
	return fmt.Errorf("%s secret %s/%s: %s", kind, sec.Namespace, sec.Name, fmt.Sprintf(format, args...))
}

// parseBool reads an optional "true"/"false" key; absent is false.
func parseBool(data map[string]string, key string) (bool, error) {
	v := strings.TrimSpace(data[key])
	if v == "" {
		return false, nil
	}
	return strconv.ParseBool(v)
}

// setIf sets data[key] to v unless v is empty.
func setIf(data map[string]string, key, v string) {
	if v != "" {
		data[key] = v
	}
}
