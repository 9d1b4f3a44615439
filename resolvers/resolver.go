// Package resolvers implements the GraphQL schema in schema/*.graphqls.
//
// Resolvers are thin: they authorize, call a service or loader, and map the
// result to a graph/model type. The root Resolver only holds dependencies;
// gqlgen generates the per-type resolver stubs next to this file
// (*.resolvers.go) and keeps their bodies on regeneration.
//
// Errors that clients may see are returned as *Error with a stable Code;
// every other error reaches clients as "internal error" (see apiserver).
package resolvers

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appindex"
	"github.com/graphcd/graphcd/controller/appset"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/internal/version"
)

// Resolver is the root resolver. It holds the dependencies every resolver
// needs and nothing else. Make it with New.
type Resolver struct {
	Config

	// conns are the repositories' last connection tests.
	conns connections
	// compiled keeps each project compiled, as the controller's does: an
	// app outside graphcd's namespace is admitted (see admitted) on every
	// read and delivered event, and a project compiles only when it changes.
	compiled project.Cache
}

// New returns the root resolver over the services in c.
func New(c Config) *Resolver { return &Resolver{Config: c} }

// Config is what the resolvers serve from: the build, the namespace of
// Applications and the services they call. A nil service turns its part
// of the API off, as each field says.
type Config struct {
	// Build is the build information reported by Query.version.
	Build version.Info
	// Apps answers reads of Applications. Nil means an API without
	// applications (every list is empty).
	Apps ApplicationStore
	// Namespace is where Applications live when a query names no
	// namespace.
	Namespace string
	// AppNamespaces are the namespaces whose Applications the API serves:
	// Namespace and those of --application-namespaces. An app elsewhere
	// does not exist for the API (the index and the controller watch no
	// other), and a manifest that names another namespace is refused
	// rather than created where nothing would ever read it. Nil serves
	// every namespace (tests that isolate by namespace).
	AppNamespaces *project.AppNamespaces
	// Writer changes Applications. Nil makes the API read-only.
	Writer ApplicationWriter
	// Authz authorizes reads and writes. Nil allows everything (the API
	// before Auth is configured).
	Authz Authorizer
	// AccountService manages local accounts and tokens; nil means none.
	AccountService AccountService
	// Events streams reconciliation events to subscriptions. Nil means no
	// live events.
	Events EventSource
	// Projects reads AppProjects; nil means none.
	Projects ProjectStore
	// Clusters lists destination clusters; nil means none.
	Clusters ClusterLister
	// Repositories lists repositories; nil means none.
	Repositories RepositoryLister
	// KubeEvents reads the Kubernetes Events of Applications; nil means
	// none.
	KubeEvents EventReader
	// ProjectWriter changes AppProjects; nil makes them read-only.
	ProjectWriter ProjectWriter
	// Secrets writes repository and cluster Secrets; nil makes them
	// read-only.
	Secrets SecretWriter
	// RepoTester tests a repository before it is saved; nil skips the test.
	RepoTester RepoTester
	// States reads the controller's resource trees and managed resources;
	// nil means none.
	States StateReader
	// Logs reads Pod logs; nil means none.
	Logs LogReader
	// Settings reads the public settings; nil means defaults.
	Settings SettingsReader
	// Resources deletes and patches live objects of applications; nil
	// makes them read-only.
	Resources ResourceWriter
	// Manifests renders application sources with their projects' rules
	// (Application.manifests) and checks the repository of a source
	// against them (Application.revisions); nil makes both fail.
	Manifests ManifestRenderer
	// Repo lists the commits of sources (Application.revisions); nil
	// makes it fail.
	Repo RepoServer
	// Insights answers Query.insights; nil means the server keeps no
	// delivery insights.
	Insights InsightsIndex
	// Audit reads the audit trail (Query.auditLog, Subscription.auditEvents);
	// nil means the server keeps none.
	Audit AuditLog
	// RepoCreds finds repository credentials for the connection state of
	// repositories; nil uses none.
	RepoCreds RepoCredentials
	// AppSets reads ApplicationSets; nil means none (every list is
	// empty).
	AppSets ApplicationSetStore
	// AppSetWriter changes ApplicationSets; nil makes them read-only.
	AppSetWriter ApplicationSetWriter
	// Links gives the settings' deep links; nil gives none.
	Links LinkSource
	// Actions gives the resource actions of graphcd-cm; nil offers and
	// runs none.
	Actions ActionSource
	// AppEvents records the Events of resource action runs on their
	// applications; nil records none.
	AppEvents AppEventRecorder
	// Notifications is the notifications configuration
	// (graphcd-notifications-cm) and the sender of testNotification; nil
	// turns testNotification off, lists subscriptions with the built-in
	// catalog (no default triggers) and checks no subscription against
	// a configuration.
	Notifications NotificationSource
	// AppSetSources give ApplicationSet previews what the controller's
	// generators read beyond clusters and repositories; nil leaves the
	// clusterDecisionResource, plugin, SCM provider and pull request
	// generators failing in previews.
	AppSetSources *GeneratorSources
	// Status reads what controllers and replicas publish of themselves
	// and the clusters (Cluster.info, Query.componentStatus); nil shows
	// no cluster info and an empty component status.
	Status StatusReader
}

// GeneratorSources are what previews read as the controller does:
// Client reads the duck-typed resources, the plugins' ConfigMaps and the
// Secrets of tokens, without a cache; Forges is the controller's policy.
type GeneratorSources struct {
	Client client.Client
	Forges appset.ForgePolicy
}

// ApplicationStore is the read side of Applications the API serves from
// memory (appindex.Index implements it).
type ApplicationStore interface {
	// Get returns the app with key, or nil. The app is shared: never
	// modify it.
	Get(key types.NamespacedName) *v1alpha1.Application
	// Page returns one page of apps; errors wrapping appindex.ErrBadQuery
	// are the client's.
	Page(q appindex.Query) (appindex.Page, error)
	// Changes signals each change of the app with key until ctx ends.
	Changes(ctx context.Context, key types.NamespacedName) <-chan struct{}
}
