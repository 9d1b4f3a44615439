package manifests

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/project"
)

// GPGKeysConfigMap is the ConfigMap, in the namespace of the projects,
// that holds the public keys of spec.signatureKeys: each entry is a key
// ID (16 hex digits, or the 40-hex fingerprint) and its ASCII-armored
// public key, as Argo CD's argocd-gpg-keys-cm.
const GPGKeysConfigMap = "graphcd-gpg-keys-cm"

// ErrNoPublicKey is returned when a project requires signed commits and
// none of its keys has a public key to verify with.
var ErrNoPublicKey = errors.New("no public key to verify commit signatures with")

// publicKeys returns the armored public keys of the signatureKeys of proj
// (compiled as rules), sorted; none when the project requires no
// signature.
func (r *Renderer) publicKeys(ctx context.Context, proj *v1alpha1.AppProject, rules *project.Rules) ([]string, error) {
	ids := rules.SignatureKeys()
	if len(ids) == 0 {
		return nil, nil
	}
	var cm corev1.ConfigMap
	if r.Keys != nil {
		err := r.Keys.Get(ctx, types.NamespacedName{Namespace: proj.Namespace, Name: GPGKeysConfigMap}, &cm)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, &LookupError{What: fmt.Sprintf("read ConfigMap %s/%s", proj.Namespace, GPGKeysConfigMap), Err: err}
		}
	}
	var keys []string
	for name, armored := range cm.Data {
		id := strings.ToUpper(strings.TrimSpace(name))
		if len(id) == 40 {
			id = id[24:]
		}
		if slices.Contains(ids, id) {
			keys = append(keys, armored)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("project %s requires commits signed by %s: %w (add the public key to ConfigMap %s/%s)",
			proj.Name, strings.Join(ids, ", "), ErrNoPublicKey, proj.Namespace, GPGKeysConfigMap)
	}
	slices.Sort(keys)
	return keys, nil
}
