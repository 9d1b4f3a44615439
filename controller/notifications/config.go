package notifications

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/argoproj/notifications-engine/pkg/api"
	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/argoproj/notifications-engine/pkg/subscriptions"
	"github.com/argoproj/notifications-engine/pkg/templates"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The ConfigMap and Secret that hold the configuration, in graphcd's
// namespace: graphcd's names, or Argo CD's when graphcd's are missing, so
// that a configuration carried over keeps working unchanged.
const (
	ConfigMapName     = "graphcd-notifications-cm"
	SecretName        = "graphcd-notifications-secret" //nolint:gosec // G101: a Secret's name, not a credential
	ArgoConfigMapName = "argocd-notifications-cm"
	ArgoSecretName    = "argocd-notifications-secret" //nolint:gosec // G101: a Secret's name, not a credential
)

// Bounds on a configuration: an administrator writes it, but a mistake
// must not make every evaluation slow.
const (
	maxTriggers   = 500
	maxConditions = 50
	maxTemplates  = 1000
	maxExprBytes  = 4 << 10
)

// Config is a compiled notifications configuration: the triggers (the
// built-in catalog's, less those the ConfigMap redefines), the templates,
// the services and the subscriptions every app gets. Make it with Parse;
// it is safe for concurrent use.
type Config struct {
	triggers  map[string]*Trigger
	templates map[string]services.Notification
	render    templates.Service
	// services are the configured services by name, with their type
	// (slack, email, webhook ...), and how to make each.
	services map[string]serviceEntry
	// defaultTriggers are the triggers of a subscription that names
	// none; serviceDefaults the same per service, first.
	defaultTriggers []string
	serviceDefaults map[string][]string
	global          subscriptions.DefaultSubscriptions
	// context is the ConfigMap's context: values every template reads as
	// .context.
	context map[string]string
	// secrets are the Secret's values, longest first, for Redact.
	secrets []string
	// warnings are what is wrong but not fatal: a $key reference the
	// Secret lacks (the service then gets the reference as it is).
	warnings []string
}

type serviceEntry struct {
	typ  string
	make api.ServiceFactory
}

// Parse compiles the data of a notifications ConfigMap, with the values
// of its Secret for the $key references in service settings. Every
// trigger, template and expression is compiled here, so a mistake is
// reported at once, naming the key. The catalog's triggers and templates
// are there unless the ConfigMap defines ones of the same names.
func Parse(data map[string]string, secret map[string][]byte) (*Config, error) {
	quietEngine.Do(func() {
		// The engine logs through logrus's standard logger; what it
		// would say, Parse reports (Warnings) or returns.
		logrus.SetOutput(io.Discard)
	})
	cm := &corev1.ConfigMap{Data: data}
	sec := &corev1.Secret{Data: secret}
	parsed, err := api.ParseConfig(cm, sec)
	if err != nil {
		return nil, err
	}
	c := &Config{
		triggers: map[string]*Trigger{}, templates: map[string]services.Notification{}, services: map[string]serviceEntry{},
		defaultTriggers: parsed.DefaultTriggers, serviceDefaults: parsed.ServiceDefaultTriggers, global: parsed.Subscriptions,
		context: map[string]string{},
	}
	for _, v := range secret {
		if len(v) >= minSecretBytes {
			c.secrets = append(c.secrets, string(v))
		}
	}
	slices.SortFunc(c.secrets, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	if v, ok := data["context"]; ok {
		if err := yaml.Unmarshal([]byte(v), &c.context); err != nil {
			return nil, fmt.Errorf("context: %w", err)
		}
	}
	for key := range data {
		if !strings.HasPrefix(key, "service.") {
			continue
		}
		parts := strings.Split(key, ".")
		name := parts[len(parts)-1]
		entry := serviceEntry{typ: parts[1], make: parsed.Services[name]}
		switch settings := data[key]; entry.typ {
		case "webhook":
			entry.make = func() (services.NotificationService, error) { return newWebhookSender(settings, secret) }
		case "github":
			entry.make = func() (services.NotificationService, error) { return newGitHubSender(settings, secret) }
		}
		c.services[name] = entry
		for _, ref := range secretRef.FindAllString(data[key], -1) {
			if _, ok := secret[ref[1:]]; !ok {
				c.warnings = append(c.warnings, fmt.Sprintf("%s: %s is not a key of the notifications Secret", key, ref))
			}
		}
	}
	slices.Sort(c.warnings)
	if len(parsed.Triggers) > maxTriggers || len(parsed.Templates) > maxTemplates {
		return nil, fmt.Errorf("at most %d triggers and %d templates, got %d and %d", maxTriggers, maxTemplates, len(parsed.Triggers), len(parsed.Templates))
	}
	builtinTriggers, builtinTemplates := catalog()
	maps.Copy(c.triggers, builtinTriggers)
	maps.Copy(c.templates, builtinTemplates)
	maps.Copy(c.templates, parsed.Templates)
	for name, conditions := range parsed.Triggers {
		t, err := compileTrigger(name, conditions)
		if err != nil {
			return nil, err
		}
		c.triggers[name] = t
	}
	if c.render, err = templates.NewService(c.templates); err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	for _, t := range c.triggers {
		for _, cond := range t.conditions {
			for _, name := range cond.send {
				if _, ok := c.templates[name]; !ok {
					return nil, fmt.Errorf("trigger.%s: template %q is not defined", t.name, name)
				}
			}
		}
	}
	return c, nil
}

// secretRef is a $key reference to the Secret in a service's settings.
var secretRef = regexp.MustCompile(`[$][\w-]+`)

// fillSecrets puts the Secret's values in place of s's $key references;
// a reference the Secret lacks stays as it is.
func fillSecrets(s string, secret map[string][]byte) string {
	return secretRef.ReplaceAllStringFunc(s, func(ref string) string {
		if v, ok := secret[ref[1:]]; ok {
			return string(v)
		}
		return ref
	})
}

var quietEngine sync.Once

// Warnings say what in the configuration is wrong but not fatal.
func (c *Config) Warnings() []string { return c.warnings }

// Trigger returns the trigger called name, or nil.
func (c *Config) Trigger(name string) *Trigger { return c.triggers[name] }

// TriggerNames are the triggers' names, sorted.
func (c *Config) TriggerNames() []string { return slices.Sorted(maps.Keys(c.triggers)) }

// TemplateNames are the templates' names, sorted.
func (c *Config) TemplateNames() []string { return slices.Sorted(maps.Keys(c.templates)) }

// DefaultTriggers are the triggers of a subscription to service that
// names none: defaultTriggers.<service>, else defaultTriggers.
func (c *Config) DefaultTriggers(service string) []string {
	return slices.Clone(c.defaultsFor(service))
}

// ServiceType is the type of the service called name (slack for
// service.slack, webhook for service.webhook.github ...), "" when none
// is configured.
func (c *Config) ServiceType(name string) string { return c.services[name].typ }

// minSecretBytes is the shortest Secret value Redact hides: shorter ones
// ("1", "true") would blank out ordinary words.
const minSecretBytes = 4

// Redact replaces every value of the Secret in s with "***": the
// services' errors may quote a URL or a header that holds one.
func (c *Config) Redact(s string) string {
	for _, v := range c.secrets {
		s = strings.ReplaceAll(s, v, "***")
	}
	return s
}

// Mask is Redact for a Secret that has no Config (one whose ConfigMap
// does not parse): every value of secret in s becomes "***".
func Mask(secret map[string][]byte, s string) string {
	values := make([]string, 0, len(secret))
	for _, v := range secret {
		if len(v) >= minSecretBytes {
			values = append(values, string(v))
		}
	}
	slices.SortFunc(values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, v := range values {
		s = strings.ReplaceAll(s, v, "***")
	}
	return s
}

// ErrNoService is Sender's error for a service the configuration lacks.
var ErrNoService = errors.New("no such notification service")

// Sender returns the service called name, ready to send.
func (c *Config) Sender(name string) (services.NotificationService, error) {
	s, ok := c.services[name]
	if !ok || s.make == nil {
		return nil, fmt.Errorf("%w %q (configure service.<type>.%s)", ErrNoService, name, name)
	}
	svc, err := s.make()
	if err != nil {
		return nil, err
	}
	return recovering{svc, name}, nil
}

// recovering turns a service's panic into an error: the engine's services
// panic on some input (a repository URL they cannot read), which comes
// from the app.
type recovering struct {
	services.NotificationService
	name string
}

func (r recovering) Send(n services.Notification, dest services.Destination) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the %s service failed unexpectedly", r.name)
		}
	}()
	return r.NotificationService.Send(n, dest)
}

// Render renders the templates named for one destination: the message
// and every service-specific part they define, from the app (as a JSON
// object) and the configuration's context.
func (c *Config) Render(app map[string]any, dest services.Destination, templateNames ...string) (*services.Notification, error) {
	for _, name := range templateNames {
		if _, ok := c.templates[name]; !ok {
			return nil, fmt.Errorf("template %q is not defined", name)
		}
	}
	vars := environment(app)
	vars["context"] = c.context
	vars["serviceType"] = cmp.Or(c.ServiceType(dest.Service), dest.Service)
	vars["recipient"] = dest.Recipient
	n, err := c.render.FormatNotification(vars, templateNames...)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", strings.Join(templateNames, ", "), err)
	}
	if err := renderGitHubPaths(n, vars); err != nil {
		return nil, fmt.Errorf("render %s: %w", strings.Join(templateNames, ", "), err)
	}
	return n, nil
}
