package auth

import (
	"context"
	"log/slog"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/kubewatch"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// ConfigMaps graphcd's authorization reads, in graphcd's namespace.
const (
	// RBACConfigMap holds the RBAC policy (Argo CD's argocd-rbac-cm).
	RBACConfigMap = wellknown.RBACConfigMap
	// SettingsConfigMap holds the settings (Argo CD's argocd-cm); auth
	// reads users.anonymous.enabled from it.
	SettingsConfigMap = wellknown.SettingsConfigMap
)

// keyAnonymous turns anonymous access on in graphcd-cm, as in argocd-cm.
const keyAnonymous = "users.anonymous.enabled"

// WatchPolicy keeps a's policy equal to graphcd-rbac-cm in the namespace
// of watch, and anonymous access to graphcd-cm's users.anonymous.enabled,
// until ctx ends. It returns once both have been read. Invalid policy
// lines are logged (with their line and reason, never a whole line of the
// policy beyond its fields) and left out.
func WatchPolicy(ctx context.Context, watch *kubewatch.Source, a *Authorizer, log *slog.Logger) error {
	err := watch.ConfigMap(ctx, RBACConfigMap, func(cm *corev1.ConfigMap) {
		if err := a.SetPolicy(configMapData(cm)); err != nil {
			log.Error("RBAC policy: lines left out or policy kept", "configmap", watch.Namespace()+"/"+RBACConfigMap, "error", err)
		}
	})
	if err != nil {
		return err
	}
	return watch.ConfigMap(ctx, SettingsConfigMap, func(cm *corev1.ConfigMap) {
		a.SetAnonymous(strings.TrimSpace(configMapData(cm)[keyAnonymous]) == "true")
	})
}

// configMapData is cm's data; nil when it was deleted.
func configMapData(cm *corev1.ConfigMap) map[string]string {
	if cm == nil {
		return nil
	}
	return cm.Data
}

// ProjectSource tells about AppProjects as they change (catalog.Catalog
// does).
type ProjectSource interface {
	WatchProjects(ctx context.Context, set func(*v1alpha1.AppProject), remove func(name string)) error
}

// WatchProjects keeps the project roles of a equal to the AppProjects of
// src until ctx ends. Invalid role policies are logged and left out.
func WatchProjects(ctx context.Context, src ProjectSource, a *Authorizer, log *slog.Logger) error {
	return src.WatchProjects(ctx, func(p *v1alpha1.AppProject) {
		if err := a.SetProject(p); err != nil {
			log.Error("project roles: policies left out", "project", p.Name, "error", err)
		}
	}, a.RemoveProject)
}
