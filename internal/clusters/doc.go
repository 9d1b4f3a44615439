// Package clusters knows the destination clusters graphcd deploys to. Each
// is a Secret in graphcd's namespace labelled graphcd.io/secret-type:
// cluster (Argo CD's argocd.argoproj.io/secret-type: cluster is accepted
// too, so existing Argo CD cluster Secrets carry over unchanged):
//
//	apiVersion: v1
//	kind: Secret
//	metadata:
//	  name: prod-eu
//	  namespace: graphcd
//	  labels:
//	    graphcd.io/secret-type: cluster
//	type: Opaque
//	stringData:
//	  name: prod-eu                        # spec.destination.name
//	  server: https://prod-eu.example.com  # spec.destination.server
//	  namespaces: web,db                   # optional: only these namespaces
//	  clusterResources: "true"             # with namespaces: cluster-scoped kinds too
//	  project: payments                    # optional: only this AppProject
//	  shard: "1"                           # optional: pin to controller shard 1
//	  config: |
//	    {
//	      "bearerToken": "<service account token>",
//	      "tlsClientConfig": {
//	        "caData": "<base64 PEM of the cluster CA>",
//	        "serverName": "prod-eu.internal"
//	      }
//	    }
//
// The config JSON logs in one of these ways:
//
//   - "bearerToken": a token, typically of a ServiceAccount;
//   - "username" and "password": basic authentication;
//   - "tlsClientConfig": {"certData", "keyData"}: a client certificate, both
//     base64 PEM;
//   - "execProviderConfig": {"command", "args", "env", "apiVersion",
//     "installHint"}: a client-go credential plugin such as
//     `aws eks get-token` or `gke-gcloud-auth-plugin`, run without a
//     terminal.
//
// tlsClientConfig also takes "insecure" (skip certificate checks; not
// together with caData), "serverName" and "caData". "proxyUrl" sends the
// traffic through an http, https or socks5 proxy, and "disableCompression"
// turns off response compression. Argo CD's "awsAuthConfig" is not
// supported: the Secret is rejected with a message pointing at
// execProviderConfig instead.
//
// The cluster graphcd runs in needs no Secret: it is always there as
// https://kubernetes.default.svc, named in-cluster, and graphcd talks to it
// with its own credentials. A Secret with that server and no credentials
// renames it or limits its namespaces:
//
//	stringData:
//	  name: management
//	  server: https://kubernetes.default.svc
//	  namespaces: apps,tools
//
// An application picks its cluster by spec.destination.server or
// spec.destination.name. Naming both is allowed only when they agree.
//
// namespaces and clusterResources mean what they mean in Argo CD, and the
// controller enforces them: the cluster's cache lists and watches every
// namespaced kind in each listed namespace (never cluster-wide, so a
// ServiceAccount with RoleBindings in those namespaces only is enough) and
// cluster-scoped kinds only when clusterResources is "true". A manifest
// outside the namespaces, or a cluster-scoped one without
// clusterResources, fails the app's comparison and sync before anything
// is applied.
//
// A Registry watches the cluster Secrets (and only them: the watch selects
// by label) and answers lookups:
//
//	reg, err := clusters.New(clusters.Options{Client: client, Namespace: "graphcd", InCluster: ownConfig})
//	...
//	reg.OnChange(func(server string) { restartClusterCache(server) })
//	if err := reg.Start(ctx); err != nil { ... }
//	cluster, err := reg.Resolve(app.Spec.Destination)
//
// An invalid Secret does not stop the others from working. It is logged,
// listed by Registry.Errors, and quoted when an application names its
// cluster. When two Secrets declare the same name or server, the one
// created later wins, the same way on every replica, and a warning names
// both Secrets. No error or log line ever carries a token, password or
// key.
package clusters
