//go:build integration

package reliability

// wavesApp is the directory of an app that syncs in several phases and
// waves, with a slow hook in wave 1 so that a fault can land in the
// middle of it.
const wavesApp = "waves"

// wavesYAML: a PreSync hook, a ConfigMap in wave 0, a Sync hook in wave 1
// that runs six pods one after another (several seconds on KWOK), a
// ConfigMap in wave 2 and a PostSync hook. Hooks keep their Jobs (the
// default BeforeHookCreation policy), so the test can count them.
const wavesYAML = `apiVersion: batch/v1
kind: Job
metadata:
  generateName: pre-
  annotations:
    argocd.argoproj.io/hook: PreSync
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: pre, image: registry.example.com/pre:1}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: wave-0
  annotations:
    argocd.argoproj.io/sync-wave: "0"
data: {wave: "0"}
---
apiVersion: batch/v1
kind: Job
metadata:
  generateName: slow-
  annotations:
    argocd.argoproj.io/hook: Sync
    argocd.argoproj.io/sync-wave: "1"
spec:
  completions: 6
  parallelism: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: slow, image: registry.example.com/slow:1}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: wave-2
  annotations:
    argocd.argoproj.io/sync-wave: "2"
data: {wave: "2"}
---
apiVersion: batch/v1
kind: Job
metadata:
  generateName: post-
  annotations:
    argocd.argoproj.io/hook: PostSync
    argocd.argoproj.io/sync-wave: "3"
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: post, image: registry.example.com/post:1}]
`

// postDeleteApp is the directory of an app with a slow PostDelete hook:
// a Job of six pods one after another, run when the app is deleted.
const postDeleteApp = "postdelete"

const postDeleteYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: kept
data: {app: postdelete}
---
apiVersion: batch/v1
kind: Job
metadata:
  generateName: post-
  annotations:
    argocd.argoproj.io/hook: PostDelete
spec:
  completions: 6
  parallelism: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: post, image: registry.example.com/post:1}]
`
