package notifications

import (
	"fmt"
	"sync"

	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/argoproj/notifications-engine/pkg/triggers"
	"sigs.k8s.io/yaml"
)

// The built-in catalog: the triggers Argo CD users subscribe to by name,
// with the conditions Argo CD's catalog documents, and a template for
// each. A ConfigMap entry of the same name replaces one.
const catalogTriggers = `
on-created:
- description: The application was created.
  when: "true"
  oncePer: app.metadata.name
  send: [app-created]
on-deleted:
- description: The application is being deleted.
  when: app.metadata.deletionTimestamp != nil
  oncePer: app.metadata.name
  send: [app-deleted]
on-deployed:
- description: A sync succeeded and the application is healthy; once per revision.
  when: app.status.operationState.phase in ['Succeeded'] and app.status.health.status == 'Healthy'
  oncePer: app.status.sync.revision
  send: [app-deployed]
on-health-degraded:
- description: The application's health is Degraded.
  when: app.status.health.status == 'Degraded'
  send: [app-health-degraded]
on-sync-failed:
- description: A sync ended in Failed or Error.
  when: app.status.operationState.phase in ['Error', 'Failed']
  send: [app-sync-failed]
on-sync-running:
- description: A sync is running.
  when: app.status.operationState.phase in ['Running']
  send: [app-sync-running]
on-sync-status-unknown:
- description: The application's sync status is Unknown.
  when: app.status.sync.status == 'Unknown'
  send: [app-sync-status-unknown]
on-sync-succeeded:
- description: A sync succeeded.
  when: app.status.operationState.phase in ['Succeeded']
  send: [app-sync-succeeded]
`

const catalogTemplates = `
app-created:
  message: "graphcd: application {{.app.metadata.name}} was created (project {{.app.spec.project}})."
  email:
    subject: "graphcd: application {{.app.metadata.name}} was created"
app-deleted:
  message: "graphcd: application {{.app.metadata.name}} is being deleted."
  email:
    subject: "graphcd: application {{.app.metadata.name}} is being deleted"
app-deployed:
  message: "graphcd: {{.app.metadata.name}} runs revision {{.app.status.sync.revision}} and is healthy."
  email:
    subject: "graphcd: {{.app.metadata.name}} deployed revision {{.app.status.sync.revision}}"
app-health-degraded:
  message: "graphcd: {{.app.metadata.name}} is Degraded{{with .app.status.health.message}}: {{.}}{{end}}."
  email:
    subject: "graphcd: {{.app.metadata.name}} is Degraded"
app-sync-failed:
  message: "graphcd: the sync of {{.app.metadata.name}} ended in {{.app.status.operationState.phase}}: {{.app.status.operationState.message}}"
  email:
    subject: "graphcd: the sync of {{.app.metadata.name}} failed"
app-sync-running:
  message: "graphcd: {{.app.metadata.name}} is syncing{{with .app.status.operationState.operation.initiatedBy.username}} (started by {{.}}){{end}}."
  email:
    subject: "graphcd: {{.app.metadata.name}} is syncing"
app-sync-status-unknown:
  message: "graphcd: the sync status of {{.app.metadata.name}} is Unknown{{range .app.status.conditions}}; {{.type}}: {{.message}}{{end}}"
  email:
    subject: "graphcd: the sync status of {{.app.metadata.name}} is Unknown"
app-sync-succeeded:
  message: "graphcd: {{.app.metadata.name}} synced to {{.app.status.operationState.syncResult.revision}}."
  email:
    subject: "graphcd: {{.app.metadata.name}} synced"
`

// catalog returns the catalog's triggers, compiled once, and templates.
var catalog = sync.OnceValues(func() (map[string]*Trigger, map[string]services.Notification) {
	var conds map[string][]triggers.Condition
	var tmpls map[string]services.Notification
	if err := yaml.Unmarshal([]byte(catalogTriggers), &conds); err != nil {
		panic(fmt.Sprintf("the built-in triggers: %v", err))
	}
	if err := yaml.Unmarshal([]byte(catalogTemplates), &tmpls); err != nil {
		panic(fmt.Sprintf("the built-in templates: %v", err))
	}
	out := make(map[string]*Trigger, len(conds))
	for name, c := range conds {
		t, err := compileTrigger(name, c)
		if err != nil {
			panic(err)
		}
		out[name] = t
	}
	return out, tmpls
})
