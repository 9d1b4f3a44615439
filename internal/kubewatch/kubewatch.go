// Package kubewatch keeps graphcd's view of single named objects current
// with informers: a Source watches each Secret and ConfigMap of graphcd's
// namespace once however many parts of the process read it (sessions,
// accounts, RBAC, webhooks, the server certificate all read graphcd-secret
// or graphcd-cm). The server and controller commands make one Source and
// pass it down.
package kubewatch

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Source shares one watch per named object of one namespace.
type Source struct {
	ctx       context.Context
	client    kubernetes.Interface
	namespace string

	mu        sync.Mutex
	informers map[string]cache.SharedIndexInformer // by kind/name
}

// NewSource returns a Source over namespace. Each object's watch starts
// with its first reader and runs until ctx ends.
func NewSource(ctx context.Context, client kubernetes.Interface, namespace string) *Source {
	return &Source{ctx: ctx, client: client, namespace: namespace, informers: map[string]cache.SharedIndexInformer{}}
}

// Namespace is the namespace the Source watches.
func (s *Source) Namespace() string { return s.namespace }

// Client is the client the Source watches with, for readers that also
// write.
func (s *Source) Client() kubernetes.Interface { return s.client }

// Secret calls on with each version of the Secret name, and with nil when
// it is deleted, until ctx ends. It returns once on has seen the current
// state (on has then been called if the Secret exists); an error means it
// could not, and on is not called again. on is called from one goroutine
// at a time.
func (s *Source) Secret(ctx context.Context, name string, on func(*corev1.Secret)) error {
	inf := s.informer("secrets", name, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Core().V1().Secrets().Informer()
	})
	return subscribe(ctx, inf, s.namespace, name, on)
}

// ConfigMap is Secret for the ConfigMap name.
func (s *Source) ConfigMap(ctx context.Context, name string, on func(*corev1.ConfigMap)) error {
	inf := s.informer("configmaps", name, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Core().V1().ConfigMaps().Informer()
	})
	return subscribe(ctx, inf, s.namespace, name, on)
}

// informer returns the running informer of kind/name, starting it on first
// use.
func (s *Source) informer(kind, name string, of func(informers.SharedInformerFactory) cache.SharedIndexInformer) cache.SharedIndexInformer {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := kind + "/" + name
	if inf, ok := s.informers[key]; ok {
		return inf
	}
	factory := informers.NewSharedInformerFactoryWithOptions(s.client, 0,
		informers.WithNamespace(s.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	inf := of(factory)
	factory.Start(s.ctx.Done())
	context.AfterFunc(s.ctx, factory.Shutdown)
	s.informers[key] = inf
	return inf
}

// subscribe adds on to inf until ctx ends and waits until on has seen
// what inf holds.
func subscribe[T interface {
	*corev1.Secret | *corev1.ConfigMap
	GetName() string
}](ctx context.Context, inf cache.SharedIndexInformer, namespace, name string, on func(T)) error {
	set := func(obj any) {
		if o, ok := obj.(T); ok && o.GetName() == name {
			on(o)
		}
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(any) { on(nil) },
	})
	if err != nil {
		return fmt.Errorf("watch %s/%s: %w", namespace, name, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = inf.RemoveEventHandler(reg) })
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		stop()
		_ = inf.RemoveEventHandler(reg)
		return fmt.Errorf("watch %s/%s: %w", namespace, name, context.Cause(ctx))
	}
	return nil
}
