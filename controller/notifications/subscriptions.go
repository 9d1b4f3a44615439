package notifications

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/argoproj/notifications-engine/pkg/services"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// Annotation prefixes of subscriptions: Argo CD's, and graphcd's own.
const (
	ArgoAnnotationPrefix = "notifications.argoproj.io"
	AnnotationPrefix     = "notifications.graphcd.io"
)

// maxSubscriptions bounds what one app subscribes to.
const maxSubscriptions = 1000

// Subscription is one trigger to send to one destination.
type Subscription struct {
	Trigger     string               `json:"trigger"`
	Destination services.Destination `json:"destination"`
}

// yamlSubscription is one entry of the <prefix>/subscriptions annotation.
type yamlSubscription struct {
	Trigger      []string `json:"trigger"`
	Destinations []struct {
		Service    string   `json:"service"`
		Recipients []string `json:"recipients"`
	} `json:"destinations"`
}

// Origin says where a subscription is declared.
type Origin string

// The origins of subscriptions.
const (
	FromApplication Origin = "application"
	FromProject     Origin = "project"
	FromConfigMap   Origin = "configmap"
)

// Declaration is one subscription as it is declared: where, and by which
// annotation.
type Declaration struct {
	Subscription
	Origin Origin `json:"origin"`
	// Annotation is the key of the annotation that declares it; empty
	// for the ConfigMap's subscriptions.
	Annotation string `json:"annotation,omitempty"`
	// Defaults says the declaration names no trigger, so that it takes
	// the default triggers, of which Trigger is one.
	Defaults bool `json:"defaults,omitempty"`
}

// Subscriptions returns what an app subscribes to, sorted and without
// duplicates: its own annotations and its project's (with either prefix,
// in Argo CD's forms:
// <prefix>/subscribe.<trigger>.<service>: "<recipient>;<recipient>",
// <prefix>/subscribe.<service> for the default triggers, and the YAML
// list <prefix>/subscriptions), and the ConfigMap's subscriptions whose
// selector matches the app's labels. An annotation that cannot be read
// is left out and named in the error; the others still count.
func (c *Config) Subscriptions(appAnnotations, appLabels, projectAnnotations map[string]string) ([]Subscription, error) {
	decls, err := c.Declarations(appAnnotations, appLabels, projectAnnotations)
	out := make([]Subscription, 0, len(decls))
	for _, d := range decls {
		out = append(out, d.Subscription)
	}
	slices.SortFunc(out, compareSubscriptions)
	out = slices.Compact(out)
	if len(out) > maxSubscriptions {
		err = errors.Join(err, fmt.Errorf("%d subscriptions, more than %d: the rest are left out", len(out), maxSubscriptions))
		out = out[:maxSubscriptions]
	}
	return out, err
}

// Declarations are Subscriptions before they are merged: each with where
// it is declared, the project's first, then the app's, then the
// ConfigMap's, each sorted by annotation, trigger, service and
// recipient. A webhook's subscription has one empty recipient.
func (c *Config) Declarations(appAnnotations, appLabels, projectAnnotations map[string]string) ([]Declaration, error) {
	var out []Declaration
	var errs []error
	for _, src := range []struct {
		origin      Origin
		annotations map[string]string
	}{{FromProject, projectAnnotations}, {FromApplication, appAnnotations}} {
		start := len(out)
		for key, value := range src.annotations {
			err := c.readAnnotation(key, value, func(trigger, service string, recipients []string, defaults bool) {
				out = appendDeclared(out, Declaration{Origin: src.origin, Annotation: key, Defaults: defaults}, trigger, service, recipients)
			})
			if err != nil {
				errs = append(errs, err)
			}
		}
		slices.SortFunc(out[start:], func(a, b Declaration) int {
			return cmp.Or(cmp.Compare(a.Annotation, b.Annotation), compareSubscriptions(a.Subscription, b.Subscription))
		})
		if len(out) > maxSubscriptions {
			break
		}
	}
	set := labels.Set(appLabels)
	for _, s := range c.global {
		if s.Selector != nil && !s.Selector.Matches(set) {
			continue
		}
		for _, trigger := range orDefault(s.Triggers, c.defaultTriggers) {
			for _, recipient := range s.Recipients {
				service, to, _ := strings.Cut(recipient, ":")
				out = appendDeclared(out, Declaration{Origin: FromConfigMap, Defaults: len(s.Triggers) == 0}, trigger, service, []string{to})
			}
		}
	}
	if len(out) > maxSubscriptions {
		errs = append(errs, fmt.Errorf("%d subscriptions, more than %d: the rest are left out", len(out), maxSubscriptions))
		out = out[:maxSubscriptions]
	}
	return out, errors.Join(errs...)
}

// appendDeclared appends d once per recipient (one empty recipient when
// there is none: a webhook needs none).
func appendDeclared(out []Declaration, d Declaration, trigger, service string, recipients []string) []Declaration {
	if len(recipients) == 0 {
		recipients = []string{""}
	}
	for _, r := range recipients {
		d.Subscription = Subscription{Trigger: trigger, Destination: services.Destination{Service: service, Recipient: strings.TrimSpace(r)}}
		out = append(out, d)
	}
	return out
}

func compareSubscriptions(a, b Subscription) int {
	return cmp.Or(cmp.Compare(a.Trigger, b.Trigger), cmp.Compare(a.Destination.Service, b.Destination.Service), cmp.Compare(a.Destination.Recipient, b.Destination.Recipient))
}

// readAnnotation reads one annotation, if it is a subscription; defaults
// says it names no trigger.
func (c *Config) readAnnotation(key, value string, add func(trigger, service string, recipients []string, defaults bool)) error {
	prefix, name, ok := strings.Cut(key, "/")
	if !ok || (prefix != ArgoAnnotationPrefix && prefix != AnnotationPrefix) {
		return nil
	}
	if name == "subscriptions" {
		var list []yamlSubscription
		if err := yaml.Unmarshal([]byte(value), &list); err != nil {
			return fmt.Errorf("annotation %s: %w", key, err)
		}
		for _, s := range list {
			for _, d := range s.Destinations {
				for _, trigger := range orDefault(s.Trigger, c.defaultsFor(d.Service)) {
					add(trigger, d.Service, d.Recipients, len(s.Trigger) == 0)
				}
			}
		}
		return nil
	}
	trigger, service, ok := ParseSubscribeKey(name)
	if !ok {
		return nil
	}
	recipients := splitRecipients(value)
	if trigger == "" {
		for _, trigger := range c.defaultsFor(service) {
			add(trigger, service, recipients, true)
		}
		return nil
	}
	add(trigger, service, recipients, false)
	return nil
}

// ParseSubscribeKey reads the name of a subscription annotation (its key
// without the prefix): subscribe.<trigger>.<service>, or
// subscribe.<service> (trigger "") for the default triggers. Trigger
// names may hold dots; service names never do.
func ParseSubscribeKey(name string) (trigger, service string, ok bool) {
	rest, ok := strings.CutPrefix(name, "subscribe.")
	if !ok || rest == "" {
		return "", "", false
	}
	i := strings.LastIndex(rest, ".")
	if i < 0 {
		return "", rest, true
	}
	return rest[:i], rest[i+1:], true
}

// defaultsFor is the triggers of a subscription to service that names
// none: the service's defaultTriggers.<service>, else defaultTriggers.
func (c *Config) defaultsFor(service string) []string {
	return orDefault(c.serviceDefaults[service], c.defaultTriggers)
}

// splitRecipients splits "a;b; c" into its recipients.
func splitRecipients(v string) []string {
	var out []string
	for _, r := range strings.Split(v, ";") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// orDefault is list, or def when list is empty.
func orDefault(list, def []string) []string {
	if len(list) == 0 {
		return def
	}
	return list
}
