package resolvers

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/argoproj/notifications-engine/pkg/services"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/controller/notifications"
	"github.com/graphcd/graphcd/graph/model"
)

// NotificationSource is the API server's notifications configuration
// (notifycfg.Source implements it).
type NotificationSource interface {
	// Config is the configuration now, and why the ConfigMap does not
	// parse when it does not (the configuration is then the last that
	// did); the error holds no value of the Secret.
	Config() (*notifications.Config, error)
	// Send sends n to dest through cfg's service, within bounds of time
	// and rate; the error is masked.
	Send(ctx context.Context, cfg *notifications.Config, n services.Notification, dest services.Destination) error
}

// ReasonNotificationTestSent is the reason of the Event a sent
// testNotification leaves on its application.
const ReasonNotificationTestSent = "NotificationTestSent"

// Bounds of testNotification: destinations per call, and the size of
// one rendered notification.
const (
	maxTestDestinations = 20
	maxRenderedBytes    = 64 << 10
)

// catalogConfig is the configuration of an API without a
// NotificationSource: the built-in catalog alone.
var catalogConfig = sync.OnceValue(func() *notifications.Config {
	cfg, err := notifications.Parse(nil, nil)
	if err != nil {
		panic(err)
	}
	return cfg
})

// notificationConfig is the configuration to list subscriptions with:
// the last that parsed.
func (r *Resolver) notificationConfig() *notifications.Config {
	if r.Notifications == nil {
		return catalogConfig()
	}
	cfg, _ := r.Notifications.Config()
	return cmp.Or(cfg, catalogConfig())
}

// subscribeDeliveries follows the deliveries recorded on the app at key.
func (r *Resolver) subscribeDeliveries(ctx context.Context, key types.NamespacedName) (<-chan *model.NotificationDelivery, error) {
	release, err := r.admitAppSubscription(ctx, key)
	if err != nil {
		return nil, err
	}
	return r.streamDeliveries(ctx, key, release), nil
}

// streamDeliveries sends each delivery of the app at key whose record
// differs from the last one seen (the records at the start are the
// first seen), oldest first, until ctx ends or the caller may no longer
// see the app. The app's changes coalesce while the client reads, so
// what waits for it is at most one app's records.
func (r *Resolver) streamDeliveries(ctx context.Context, key types.NamespacedName, release func()) <-chan *model.NotificationDelivery {
	changes := r.apps().Changes(ctx, key) // before the first read: no change is missed
	seen := recordsOf(r.apps().Get(key))
	out := make(chan *model.NotificationDelivery)
	go func() {
		defer close(out)
		defer release()
		for {
			policy := r.policyChanged()
			if r.lostApp(ctx, key) {
				return
			}
			select {
			case <-changes:
			case <-policy:
				continue // only a check: the app did not change
			case <-ctx.Done():
				return
			}
			now := recordsOf(r.apps().Get(key))
			var changed []model.NotificationDelivery
			for k, d := range now {
				if was, ok := seen[k]; !ok || !sameRecord(was, d) {
					changed = append(changed, d)
				}
			}
			seen = now
			slices.SortFunc(changed, func(a, b model.NotificationDelivery) int {
				return cmp.Or(a.Time.Compare(b.Time.Time), cmp.Compare(a.Key, b.Key))
			})
			for i := range changed {
				select {
				case out <- &changed[i]:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// recordsOf is the deliveries recorded on app by key; none for nil.
func recordsOf(app *v1alpha1.Application) map[string]model.NotificationDelivery {
	out := map[string]model.NotificationDelivery{}
	if app == nil {
		return out
	}
	for _, d := range deliveries(app.Annotations) {
		out[d.Key] = d
	}
	return out
}

func sameRecord(a, b model.NotificationDelivery) bool {
	return a.Outcome == b.Outcome && a.Attempts == b.Attempts && a.Error == b.Error && a.Time.Equal(&b.Time) &&
		a.Trigger == b.Trigger && a.Service == b.Service && a.Recipient == b.Recipient
}

// notificationSubscriptions lists what app subscribes to, grouped by
// declaration: the app's first, then its project's, then the
// ConfigMap's.
func (r *Resolver) notificationSubscriptions(ctx context.Context, app *model.Application) ([]*model.NotificationSubscription, error) {
	cfg := r.notificationConfig()
	var projAnnotations map[string]string
	proj, err := r.findProject(ctx, app.Application)
	if err != nil {
		return nil, err
	}
	if proj != nil {
		projAnnotations = proj.Annotations
	}
	// An annotation that cannot be read lists nothing, as the controller
	// then skips it.
	decls, _ := cfg.Declarations(app.GetAnnotations(), app.GetLabels(), projAnnotations)
	sources := map[notifications.Origin]model.NotificationSubscriptionSource{
		notifications.FromApplication: model.NotificationSubscriptionSourceApplication,
		notifications.FromProject:     model.NotificationSubscriptionSourceProject,
		notifications.FromConfigMap:   model.NotificationSubscriptionSourceDefault,
	}
	type group struct {
		origin                       notifications.Origin
		annotation, trigger, service string
		defaults                     bool
	}
	byGroup := map[group]*model.NotificationSubscription{}
	var out []*model.NotificationSubscription
	for _, d := range decls {
		g := group{d.Origin, d.Annotation, d.Trigger, d.Destination.Service, d.Defaults}
		s, ok := byGroup[g]
		if !ok {
			s = &model.NotificationSubscription{
				Trigger: d.Trigger, Service: d.Destination.Service, Recipients: []string{}, Source: sources[d.Origin],
				Annotation: d.Annotation, DefaultTriggers: d.Defaults, TriggerDefined: cfg.Trigger(d.Trigger) != nil,
			}
			byGroup[g] = s
			out = append(out, s)
		}
		if to := d.Destination.Recipient; to != "" && !slices.Contains(s.Recipients, to) {
			s.Recipients = append(s.Recipients, to)
		}
	}
	rank := map[model.NotificationSubscriptionSource]int{
		model.NotificationSubscriptionSourceApplication: 0, model.NotificationSubscriptionSourceProject: 1, model.NotificationSubscriptionSourceDefault: 2,
	}
	slices.SortStableFunc(out, func(a, b *model.NotificationSubscription) int {
		return cmp.Or(cmp.Compare(rank[a.Source], rank[b.Source]), cmp.Compare(a.Trigger, b.Trigger),
			cmp.Compare(a.Service, b.Service), cmp.Compare(a.Annotation, b.Annotation))
	})
	return out, nil
}

// testNotification renders (and with send, sends) a template or a
// trigger's templates for an app.
func (r *Resolver) testNotification(ctx context.Context, in model.TestNotificationInput) ([]*model.TestNotificationResult, error) {
	key := r.refKey(*in.Application)
	// Rendering shows what the app's fields make of a template: get.
	// Sending speaks for the app to the outside world, with the
	// configuration's credentials: update.
	action := rbac.ActionGet
	if in.Send {
		action = rbac.ActionUpdate
	}
	app, err := r.appFor(ctx, rbac.ResourceApplications, action, key)
	if err != nil {
		return nil, err
	}
	audit.Touch(ctx, app)
	if r.Notifications == nil {
		return nil, Errorf(CodeInternal, "notifications are not available on this server")
	}
	cfg, cfgErr := r.Notifications.Config()
	if cfgErr != nil {
		return nil, Errorf(CodeBadUserInput, "the notifications configuration: %v (the controller keeps delivering with the last version that parsed)", cfgErr)
	}
	template, trigger := deref(in.Template), deref(in.Trigger)
	if (template == "") == (trigger == "") {
		return nil, Errorf(CodeBadUserInput, "give a template or a trigger (one of them)")
	}
	obj, err := notifications.AppObject(app)
	if err != nil {
		return nil, err
	}
	var templates []string
	var triggered *bool
	switch {
	case template != "":
		if !slices.Contains(cfg.TemplateNames(), template) {
			return nil, Errorf(CodeBadUserInput, "template %.64q is not defined", template)
		}
		templates = []string{template}
	default:
		t := cfg.Trigger(trigger)
		if t == nil {
			return nil, Errorf(CodeBadUserInput, "trigger %.64q is not defined", trigger)
		}
		var holds bool
		templates, holds = triggerTemplates(t.Run(obj))
		triggered = &holds
	}
	dests, err := r.testDestinations(ctx, cfg, app, trigger, in.Recipients)
	if err != nil {
		return nil, err
	}
	results := make([]*model.TestNotificationResult, len(dests))
	rendered := make([]*services.Notification, len(dests))
	for i, d := range dests {
		res := &model.TestNotificationResult{
			Service: d.Service, ServiceType: cfg.ServiceType(d.Service), Recipient: d.Recipient,
			Templates: templates, Triggered: triggered,
		}
		results[i] = res
		n, err := cfg.Render(obj, d, templates...)
		if err != nil {
			res.Error = cfg.Redact(err.Error())
			continue
		}
		doc, err := maskedJSON(cfg, n)
		switch {
		case err != nil:
			res.Error = "the rendered notification cannot be shown as JSON"
			continue
		case len(doc) > maxRenderedBytes:
			res.Error = fmt.Sprintf("the rendered notification is %d bytes, more than %d", len(doc), maxRenderedBytes)
			continue
		}
		res.Message, res.Notification, rendered[i] = cfg.Redact(n.Message), doc, n
	}
	if in.Send {
		r.sendTests(ctx, cfg, app, dests, rendered, results, cmp.Or(template, trigger))
	}
	return results, nil
}

// triggerTemplates are the templates of the conditions that hold, or,
// when none does, of every condition; holds says which.
func triggerTemplates(results []notifications.Result) (templates []string, holds bool) {
	for _, r := range results {
		holds = holds || r.Triggered
	}
	for _, r := range results {
		if r.Triggered || !holds {
			for _, t := range r.Templates {
				if !slices.Contains(templates, t) {
					templates = append(templates, t)
				}
			}
		}
	}
	return templates, holds
}

// testDestinations are the destinations recipients name
// ("service:recipient"), or, without, those of the app's subscriptions
// (to trigger, when set).
func (r *Resolver) testDestinations(ctx context.Context, cfg *notifications.Config, app *v1alpha1.Application, trigger string, recipients []string) ([]services.Destination, error) {
	var out []services.Destination
	add := func(d services.Destination) {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if recipients != nil {
		if len(recipients) == 0 || len(recipients) > maxTestDestinations {
			return nil, Errorf(CodeBadUserInput, "recipients: give 1 to %d, or omit it for the application's subscriptions", maxTestDestinations)
		}
		for _, s := range recipients {
			service, to, _ := strings.Cut(s, ":")
			service, to = strings.TrimSpace(service), strings.TrimSpace(to)
			if service == "" || len(s) > notifications.MaxRecipientBytes+64 || strings.ContainsFunc(s, isControl) {
				return nil, Errorf(CodeBadUserInput, "recipient %.64q: want service:recipient", s)
			}
			add(services.Destination{Service: service, Recipient: to})
		}
		return out, nil
	}
	var projAnnotations map[string]string
	proj, err := r.findProject(ctx, app)
	if err != nil {
		return nil, err
	}
	if proj != nil {
		projAnnotations = proj.Annotations
	}
	subs, _ := cfg.Subscriptions(app.Annotations, app.Labels, projAnnotations)
	for _, s := range subs {
		if trigger == "" || s.Trigger == trigger {
			add(s.Destination)
		}
	}
	switch {
	case len(out) == 0 && trigger != "":
		return nil, Errorf(CodeBadUserInput, "the application does not subscribe to %.64q: name recipients", trigger)
	case len(out) == 0:
		return nil, Errorf(CodeBadUserInput, "the application subscribes to nothing: name recipients")
	case len(out) > maxTestDestinations:
		return nil, Errorf(CodeBadUserInput, "the application's subscriptions name %d destinations, more than %d: name recipients", len(out), maxTestDestinations)
	}
	return out, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// sendTests sends each rendered notification (at once: the source bounds
// how many run and for how long) and records an Event on app naming who
// sent what to whom.
func (r *Resolver) sendTests(ctx context.Context, cfg *notifications.Config, app *v1alpha1.Application, dests []services.Destination,
	rendered []*services.Notification, results []*model.TestNotificationResult, what string) {
	var wg sync.WaitGroup
	for i, n := range rendered {
		if n == nil {
			continue
		}
		wg.Go(func() {
			if err := r.Notifications.Send(ctx, cfg, *n, dests[i]); err != nil {
				results[i].Error = cfg.Redact(err.Error())
				return
			}
			results[i].Sent = true
		})
	}
	wg.Wait()
	var sent []string
	for i, res := range results {
		if res.Sent {
			sent = append(sent, dests[i].Service+":"+dests[i].Recipient)
		}
	}
	if len(sent) == 0 || r.AppEvents == nil {
		return
	}
	who := "anonymous"
	if p, ok := auth.FromContext(ctx); ok && p.Subject != "" {
		who = p.Subject
	}
	note := fmt.Sprintf("%s sent a test notification (%s) to %s", who, what, strings.Join(sent, ", "))
	if err := r.AppEvents.Record(context.WithoutCancel(ctx), app, ReasonNotificationTestSent, note); err != nil {
		slog.Default().Warn("test notification sent but its event was not recorded", "application", app.Namespace+"/"+app.Name, "err", err)
	}
}

// maskedJSON is n as JSON with every string masked by cfg.Redact, one
// string at a time (a Secret's value escaped in JSON would escape a
// search of the whole document).
func maskedJSON(cfg *notifications.Config, n *services.Notification) (string, error) {
	raw, err := json.Marshal(n)
	if err != nil {
		return "", err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(maskStrings(cfg, doc)); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

func maskStrings(cfg *notifications.Config, v any) any {
	switch t := v.(type) {
	case string:
		return cfg.Redact(t)
	case []any:
		for i := range t {
			t[i] = maskStrings(cfg, t[i])
		}
	case map[string]any:
		for k, e := range t {
			t[k] = maskStrings(cfg, e)
		}
	}
	return v
}

// subscribeNotification adds recipients to an app's subscription
// annotation.
func (r *Resolver) subscribeNotification(ctx context.Context, in model.SubscribeNotificationInput) (*model.Application, error) {
	trigger := deref(in.Trigger)
	if _, err := notifications.Subscribe(nil, trigger, in.Service, in.Recipients); err != nil {
		return nil, subscriptionError(err)
	}
	if r.Notifications != nil {
		if err := r.checkSubscription(trigger, in.Service); err != nil {
			return nil, err
		}
	}
	return r.changeApplication(ctx, r.refKey(*in.Application), func(cur *v1alpha1.Application) error {
		if err := precondition(cur, in.ResourceVersion); err != nil {
			return err
		}
		edit, err := notifications.Subscribe(cur.Annotations, trigger, in.Service, in.Recipients)
		if err != nil {
			return subscriptionError(err)
		}
		if edit != nil {
			applyEdits(cur, *edit)
		}
		return nil
	})
}

// unsubscribeNotification removes recipients, or the whole annotation,
// from an app's subscription.
func (r *Resolver) unsubscribeNotification(ctx context.Context, in model.UnsubscribeNotificationInput) (*model.Application, error) {
	trigger := deref(in.Trigger)
	if _, err := notifications.Unsubscribe(nil, trigger, in.Service, in.Recipients); err != nil {
		return nil, subscriptionError(err)
	}
	return r.changeApplication(ctx, r.refKey(*in.Application), func(cur *v1alpha1.Application) error {
		if err := precondition(cur, in.ResourceVersion); err != nil {
			return err
		}
		edits, err := notifications.Unsubscribe(cur.Annotations, trigger, in.Service, in.Recipients)
		if err != nil {
			return subscriptionError(err)
		}
		applyEdits(cur, edits...)
		return nil
	})
}

// checkSubscription refuses a subscription the configuration cannot
// deliver: a trigger it does not define, a service it does not
// configure, default triggers when it has none.
func (r *Resolver) checkSubscription(trigger, service string) error {
	cfg := r.notificationConfig()
	switch {
	case trigger != "" && cfg.Trigger(trigger) == nil:
		return Errorf(CodeBadUserInput, "trigger %q is not defined; these are: %s", trigger, strings.Join(cfg.TriggerNames(), ", "))
	case cfg.ServiceType(service) == "":
		return Errorf(CodeBadUserInput, "service %q is not configured (service.<type>.%s in %s)", service, service, notifications.ConfigMapName)
	case trigger == "" && len(cfg.DefaultTriggers(service)) == 0:
		return Errorf(CodeBadUserInput, "the configuration has no defaultTriggers for %q: name a trigger", service)
	}
	return nil
}

// precondition refuses a change meant for another version of app.
func precondition(app *v1alpha1.Application, resourceVersion *string) error {
	if resourceVersion == nil || *resourceVersion == app.ResourceVersion {
		return nil
	}
	return Errorf(CodeConflict, "application %s/%s has changed since resourceVersion %.32s: read it again", app.Namespace, app.Name, *resourceVersion)
}

// applyEdits writes edits into app's annotations.
func applyEdits(app *v1alpha1.Application, edits ...notifications.Edit) {
	for _, e := range edits {
		if e.Remove {
			delete(app.Annotations, e.Key)
			continue
		}
		if app.Annotations == nil {
			app.Annotations = map[string]string{}
		}
		app.Annotations[e.Key] = e.Value
	}
}

// subscriptionError is a refused subscription as the client sees it.
func subscriptionError(err error) error {
	if errors.Is(err, notifications.ErrInvalidSubscription) {
		return &Error{Code: CodeBadUserInput, Message: err.Error()}
	}
	return err
}
