// Package webhook serves POST /api/webhook: push events from GitHub,
// GitLab, Bitbucket Cloud, Bitbucket Server, Gitea/Gogs and Azure DevOps
// refresh the Applications that deploy the pushed repository and
// revision, so that a change shows up at once instead of at the next
// poll.
//
// Each provider proves a delivery with its own secret, read from the
// graphcd-secret keys Argo CD uses in argocd-secret:
//
//	webhook.github.secret            X-Hub-Signature-256 (or X-Hub-Signature), HMAC of the body
//	webhook.gitlab.secret            X-Gitlab-Token, the secret itself
//	webhook.bitbucket.uuid           X-Hook-UUID, the webhook's UUID
//	webhook.bitbucketserver.secret   X-Hub-Signature, HMAC-SHA256 of the body
//	webhook.gogs.secret              X-Gitea-Signature / X-Gogs-Signature, HMAC-SHA256 of the body
//	webhook.azuredevops.username     basic authentication
//	webhook.azuredevops.password
//
// A provider without a secret is accepted, as Argo CD does, with one
// warning in the log.
//
// An app matches a push when any of its Git sources has a repoURL at the
// same location (repourl's Location: host and path, whatever the scheme,
// user or port) as one of the URLs the payload gives for the repository, and a targetRevision naming a pushed branch or tag ("HEAD"
// and "" follow the default branch) and, when the app has the
// ManifestPathsAnnotation and the payload lists the changed files, one of
// them is under the annotation's paths. The URLs in a payload are only ever
// compared as strings: the handler sends no request anywhere but the
// Kubernetes API, to set the refresh annotation.
//
// With Options.Queue, the apps go first to a controller in the same
// process (graphcd server with its controller), which queues those it
// compares without any API write; the refresh annotation is set only on
// the rest (a standby replica, another shard's apps).
//
//	h := webhook.New(webhook.Options{Apps: catalog.Apps, Refresher: appops.Service{Client: c}, Secrets: watch, Logger: log})
//	mux.Handle("POST /api/webhook", h)
package webhook
