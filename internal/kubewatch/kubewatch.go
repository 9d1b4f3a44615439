// Package kubewatch keeps graphcd's view of single named objects current
// with informers, for the Secrets several parts read.
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

// Secret watches the Secret name in namespace until ctx ends: on is
// called with each version of it, and with nil when it is deleted. It
// returns once the first list is in (on has then been called if the
// Secret exists); an error means it could not be, and the watch is
// stopped. on is called from one goroutine at a time.
func Secret(ctx context.Context, client kubernetes.Interface, namespace, name string, on func(*corev1.Secret)) error {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	inf := factory.Core().V1().Secrets().Informer()
	set := func(obj any) {
		if sec, ok := obj.(*corev1.Secret); ok && sec.Name == name {
			on(sec)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(any) { on(nil) },
	}); err != nil {
		return fmt.Errorf("watch %s/%s: %w", namespace, name, err)
	}
	stopCh := make(chan struct{})
	var once sync.Once
	stop := func() {
		once.Do(func() {
			close(stopCh)
			factory.Shutdown()
		})
	}
	factory.Start(stopCh)
	context.AfterFunc(ctx, stop)
	if !cache.WaitForCacheSync(stopCh, inf.HasSynced) {
		stop()
		return fmt.Errorf("watch %s/%s: %w", namespace, name, context.Cause(ctx))
	}
	return nil
}
