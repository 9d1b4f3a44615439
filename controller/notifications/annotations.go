package notifications

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Bounds on a subscription annotation that Subscribe writes.
const (
	MaxRecipients     = 50
	MaxRecipientBytes = 256
)

var (
	triggerName = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	serviceName = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_]*[A-Za-z0-9])?$`)
)

// ErrInvalidSubscription is the error of a subscription that cannot be
// written as an annotation; its message says why, for the user.
var ErrInvalidSubscription = errors.New("invalid subscription")

// SubscribeKey is the key of the annotation with prefix (ArgoAnnotationPrefix
// or AnnotationPrefix) that subscribes to trigger on service:
// <prefix>/subscribe.<trigger>.<service>, or <prefix>/subscribe.<service>
// for the default triggers (trigger ""). It checks the names: a trigger
// of letters, digits, '-', '_' and '.'; a service the same without '.'
// (the last dot separates the two); a key Kubernetes accepts.
func SubscribeKey(prefix, trigger, service string) (string, error) {
	if !serviceName.MatchString(service) {
		return "", fmt.Errorf("%w: service %.64q: letters, digits, '-' and '_' only, starting and ending with a letter or digit", ErrInvalidSubscription, service)
	}
	name := "subscribe." + service
	if trigger != "" {
		if !triggerName.MatchString(trigger) {
			return "", fmt.Errorf("%w: trigger %.64q: letters, digits, '-', '_' and '.' only, starting and ending with a letter or digit", ErrInvalidSubscription, trigger)
		}
		name = "subscribe." + trigger + "." + service
	}
	key := prefix + "/" + name
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return "", fmt.Errorf("%w: annotation %.80q: %s", ErrInvalidSubscription, key, strings.Join(errs, "; "))
	}
	return key, nil
}

// checkRecipients trims recipients and checks each: not empty, at most
// MaxRecipientBytes, no ';' (the separator) and no control character.
func checkRecipients(recipients []string) ([]string, error) {
	out := make([]string, 0, len(recipients))
	for _, r := range recipients {
		t := strings.TrimSpace(r)
		switch {
		case t == "":
			return nil, fmt.Errorf("%w: an empty recipient", ErrInvalidSubscription)
		case len(t) > MaxRecipientBytes:
			return nil, fmt.Errorf("%w: recipient %.32q... is longer than %d bytes", ErrInvalidSubscription, t, MaxRecipientBytes)
		case strings.ContainsRune(t, ';') || strings.ContainsFunc(t, unicode.IsControl):
			return nil, fmt.Errorf("%w: recipient %.64q holds ';' or a control character", ErrInvalidSubscription, t)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Edit is one annotation to set (Value) or, with Remove, to remove.
type Edit struct {
	Key    string
	Value  string
	Remove bool
}

// Subscribe returns the edit of annotations (an Application's) that adds
// recipients to its subscription to trigger ("" for the default
// triggers) on service, in Argo CD's format ("a;b"); nil when they are
// all there already. It edits the annotation with graphcd's prefix when
// the app has that one, or, having neither, when it subscribes with
// graphcd's prefix only; otherwise Argo CD's. Recipients are kept in
// order, the new ones after; a webhook's subscription has none (an empty
// value).
func Subscribe(annotations map[string]string, trigger, service string, recipients []string) (*Edit, error) {
	argoKey, err := SubscribeKey(ArgoAnnotationPrefix, trigger, service)
	if err != nil {
		return nil, err
	}
	ownKey, err := SubscribeKey(AnnotationPrefix, trigger, service)
	if err != nil {
		return nil, err
	}
	add, err := checkRecipients(recipients)
	if err != nil {
		return nil, err
	}
	key := argoKey
	value, exists := annotations[argoKey]
	if v, ok := annotations[ownKey]; ok {
		key, value, exists = ownKey, v, true
	} else if !exists && usesOwnPrefixOnly(annotations) {
		key = ownKey
	}
	have := splitRecipients(value)
	next := slices.Clone(have)
	for _, r := range add {
		if !slices.Contains(next, r) {
			next = append(next, r)
		}
	}
	if exists && len(next) == len(have) {
		return nil, nil
	}
	if len(next) > MaxRecipients {
		return nil, fmt.Errorf("%w: %s would have %d recipients, more than %d", ErrInvalidSubscription, key, len(next), MaxRecipients)
	}
	return &Edit{Key: key, Value: strings.Join(next, ";")}, nil
}

// Unsubscribe returns the edits of annotations that remove recipients
// from the subscription to trigger on service, with either prefix, or
// the whole annotations when recipients is nil. An annotation left with
// no recipient is removed. No edits: nothing to remove.
func Unsubscribe(annotations map[string]string, trigger, service string, recipients []string) ([]Edit, error) {
	var edits []Edit
	var drop []string
	if recipients != nil {
		var err error
		if drop, err = checkRecipients(recipients); err != nil {
			return nil, err
		}
	}
	for _, prefix := range []string{ArgoAnnotationPrefix, AnnotationPrefix} {
		key, err := SubscribeKey(prefix, trigger, service)
		if err != nil {
			return nil, err
		}
		value, ok := annotations[key]
		if !ok {
			continue
		}
		if recipients == nil {
			edits = append(edits, Edit{Key: key, Remove: true})
			continue
		}
		have := splitRecipients(value)
		next := slices.DeleteFunc(slices.Clone(have), func(r string) bool { return slices.Contains(drop, r) })
		switch {
		case len(next) == len(have):
		case len(next) == 0:
			edits = append(edits, Edit{Key: key, Remove: true})
		default:
			edits = append(edits, Edit{Key: key, Value: strings.Join(next, ";")})
		}
	}
	return edits, nil
}

// usesOwnPrefixOnly reports whether annotations hold subscriptions with
// graphcd's prefix and none with Argo CD's.
func usesOwnPrefixOnly(annotations map[string]string) bool {
	own := false
	for key := range annotations {
		prefix, name, _ := strings.Cut(key, "/")
		if name != "subscriptions" && !strings.HasPrefix(name, "subscribe.") {
			continue
		}
		switch prefix {
		case ArgoAnnotationPrefix:
			return false
		case AnnotationPrefix:
			own = true
		}
	}
	return own
}
