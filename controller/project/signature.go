package project

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// normalizeKeyID turns a GnuPG key ID or fingerprint into the 16-hex,
// upper-case long key ID Argo CD compares: a 40-hex fingerprint gives its
// last 16 digits. It returns "" for anything else.
func normalizeKeyID(id string) string {
	id = strings.TrimSpace(id)
	if _, err := hex.DecodeString(id); err != nil {
		return ""
	}
	switch len(id) {
	case 16:
		return strings.ToUpper(id)
	case 40:
		return strings.ToUpper(id[24:])
	}
	return ""
}

func compileSignatureKeys(keys []v1alpha1.SignatureKey, probs *problems) []string {
	var ids []string
	for i, k := range keys {
		id := normalizeKeyID(k.KeyID)
		if id == "" {
			probs.addf(fmt.Sprintf("spec.signatureKeys[%d].keyID", i),
				"%q is not a GnuPG key ID (16 hexadecimal digits) or fingerprint (40)", k.KeyID)
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// SignatureKeys returns the IDs of the keys allowed to sign the commits the
// project's applications sync, as 16-hex upper-case long key IDs. When it
// is empty, no signature is required.
func (r *Rules) SignatureKeys() []string { return slices.Clone(r.keys) }

// SignatureRequired reports whether synced commits must be signed.
func (r *Rules) SignatureRequired() bool { return len(r.keys) > 0 }

// SignatureKeyAllowed reports whether a commit signed by keyID (a long key
// ID or a fingerprint, in any case) may be synced.
func (r *Rules) SignatureKeyAllowed(keyID string) bool {
	id := normalizeKeyID(keyID)
	if id == "" {
		return false
	}
	_, found := slices.BinarySearch(r.keys, id)
	return found
}
