// Package notifications reads Argo CD Notifications' configuration and
// evaluates it for Applications: triggers (conditions in Argo CD's
// expression language, expr), templates (Go templates with Sprig's
// functions, a message and service-specific parts) and services (Slack,
// email, webhook, Teams, GitHub ...), with subscriptions by annotation on
// Applications and AppProjects (notifications.argoproj.io/subscribe.*,
// or the notifications.graphcd.io prefix).
//
//	cfg, err := notifications.Parse(configMap.Data, secret.Data)
//	results := cfg.Trigger("on-sync-failed").Run(app)   // which conditions hold
//	subs, err := cfg.Subscriptions(app.Annotations, app.Labels, project.Annotations)
//	n, err := cfg.Render(app, sub.Destination, results[0].Templates...)
//
// Parsing the ConfigMap and rendering templates and the services' sends
// use Argo's notifications-engine library, so that a configuration
// carried over from Argo CD reads, renders and sends the same; trigger
// evaluation and subscriptions are graphcd's, to report errors rather
// than log them and to read both annotation prefixes. A built-in catalog
// (on-created, on-deleted, on-deployed, on-health-degraded,
// on-sync-failed, on-sync-running, on-sync-status-unknown,
// on-sync-succeeded, each with a template) is there unless the ConfigMap
// defines its own of the same name.
//
// What was delivered for an app is kept on the app (StateAnnotation): a
// Planner decides from that State and the app's Occurrences which
// notifications to claim and send, retry, or forget; the controller
// writes the claims before sending and the outcomes after.
package notifications
