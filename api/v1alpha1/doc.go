// Package v1alpha1 holds the Go types of graphcd's custom resources,
// Application and AppProject, in API group graphcd.io, version v1alpha1.
//
// The fields mirror Argo CD's argoproj.io/v1alpha1 Application and
// AppProject field for field, with the same JSON names, so an Argo CD
// manifest works after changing only its apiVersion:
//
//	apiVersion: graphcd.io/v1alpha1   # was argoproj.io/v1alpha1
//	kind: Application
//	metadata:
//	  name: guestbook
//	spec:
//	  project: default
//	  source:
//	    repoURL: https://github.com/argoproj/argocd-example-apps.git
//	    path: guestbook
//	    targetRevision: HEAD
//	  destination:
//	    server: https://kubernetes.default.svc
//	    namespace: guestbook
//	  syncPolicy:
//	    automated:
//	      prune: true
//	      selfHeal: true
//
// The package imports only k8s.io/apimachinery so every other graphcd
// package, and programs outside graphcd, can use it cheaply. The
// CustomResourceDefinitions generated from these types live in
// config/crd/bases; regenerate both with `make generate`.
//
// +groupName=graphcd.io
// +kubebuilder:object:generate=true
package v1alpha1
