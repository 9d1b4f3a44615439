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

// Subscriptions returns what an app subscribes to, sorted and without
// duplicates: its own annotations and its project's (with either prefix,
// in Argo CD's forms:
// <prefix>/subscribe.<trigger>.<service>: "<recipient>;<recipient>",
// <prefix>/subscribe.<service> for the default triggers, and the YAML
// list <prefix>/subscriptions), and the ConfigMap's subscriptions whose
// selector matches the app's labels. An annotation that cannot be read
// is left out and named in the error; the others still count.
func (c *Config) Subscriptions(appAnnotations, appLabels, projectAnnotations map[string]string) ([]Subscription, error) {
	var out []Subscription
	var errs []error
	add := func(trigger, service string, recipients []string) {
		if len(recipients) == 0 {
			recipients = []string{""} // a webhook needs none
		}
		for _, r := range recipients {
			out = append(out, Subscription{Trigger: trigger, Destination: services.Destination{Service: service, Recipient: strings.TrimSpace(r)}})
		}
	}
	for _, annotations := range []map[string]string{projectAnnotations, appAnnotations} {
		for key, value := range annotations {
			if err := c.readAnnotation(key, value, add); err != nil {
				errs = append(errs, err)
			}
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
				add(trigger, service, []string{to})
			}
		}
	}
	slices.SortFunc(out, func(a, b Subscription) int {
		return cmp.Or(cmp.Compare(a.Trigger, b.Trigger), cmp.Compare(a.Destination.Service, b.Destination.Service), cmp.Compare(a.Destination.Recipient, b.Destination.Recipient))
	})
	out = slices.Compact(out)
	if len(out) > maxSubscriptions {
		errs = append(errs, fmt.Errorf("%d subscriptions, more than %d: the rest are left out", len(out), maxSubscriptions))
		out = out[:maxSubscriptions]
	}
	return out, errors.Join(errs...)
}

// readAnnotation reads one annotation, if it is a subscription.
func (c *Config) readAnnotation(key, value string, add func(trigger, service string, recipients []string)) error {
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
					add(trigger, d.Service, d.Recipients)
				}
			}
		}
		return nil
	}
	rest, ok := strings.CutPrefix(name, "subscribe.")
	if !ok || rest == "" {
		return nil
	}
	recipients := splitRecipients(value)
	// Trigger names may hold dots; service names never do.
	i := strings.LastIndex(rest, ".")
	if i < 0 {
		for _, trigger := range c.defaultsFor(rest) {
			add(trigger, rest, recipients)
		}
		return nil
	}
	add(rest[:i], rest[i+1:], recipients)
	return nil
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
