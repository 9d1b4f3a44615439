package auth

import (
	"context"
	"log/slog"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/graphcd/graphcd/api/v1alpha1"
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

// WatchPolicy keeps a's policy equal to graphcd-rbac-cm in namespace, and
// anonymous access to graphcd-cm's users.anonymous.enabled, until ctx
// ends. It returns once both have been read. Invalid policy lines are
// logged (with their line and reason, never a whole line of the policy
// beyond its fields) and left out.
func WatchPolicy(ctx context.Context, client kubernetes.Interface, namespace string, a *Authorizer, log *slog.Logger) error {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().ConfigMaps().Informer()
	apply := func(obj any, deleted bool) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			if t, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
				cm, ok = t.Obj.(*corev1.ConfigMap)
			}
			if !ok {
				return
			}
		}
		var data map[string]string
		if !deleted {
			data = cm.Data
		}
		switch cm.Name {
		case RBACConfigMap:
			if err := a.SetPolicy(data); err != nil {
				log.Error("RBAC policy: lines left out or policy kept", "configmap", namespace+"/"+RBACConfigMap, "error", err)
			}
		case SettingsConfigMap:
			a.SetAnonymous(strings.TrimSpace(data[keyAnonymous]) == "true")
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { apply(obj, false) },
		UpdateFunc: func(_, obj any) { apply(obj, false) },
		DeleteFunc: func(obj any) { apply(obj, true) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return context.Cause(ctx)
	}
	return nil
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
