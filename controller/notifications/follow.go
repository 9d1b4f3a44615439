package notifications

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/graphcd/graphcd/internal/kubewatch"
)

// Follow calls on with the notifications ConfigMap and Secret of watch's
// namespace — graphcd's, or Argo CD's when graphcd's is missing; nil
// when neither exists — now, and then after each change of any of them,
// until ctx ends. It returns once on has seen the current state; later
// calls come from one goroutine, one at a time, and a burst of changes
// may be seen as its last state only.
func Follow(ctx context.Context, watch *kubewatch.Source, on func(*corev1.ConfigMap, *corev1.Secret)) error {
	var mu sync.Mutex
	cms, secrets := map[string]*corev1.ConfigMap{}, map[string]*corev1.Secret{}
	changed := make(chan struct{}, 1)
	signal := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	for _, name := range []string{ConfigMapName, ArgoConfigMapName} {
		err := watch.ConfigMap(ctx, name, func(cm *corev1.ConfigMap) {
			mu.Lock()
			cms[name] = cm
			mu.Unlock()
			signal()
		})
		if err != nil {
			return fmt.Errorf("watch %s: %w", name, err)
		}
	}
	for _, name := range []string{SecretName, ArgoSecretName} {
		err := watch.Secret(ctx, name, func(s *corev1.Secret) {
			mu.Lock()
			secrets[name] = s
			mu.Unlock()
			signal()
		})
		if err != nil {
			return fmt.Errorf("watch %s: %w", name, err)
		}
	}
	current := func() (*corev1.ConfigMap, *corev1.Secret) {
		mu.Lock()
		defer mu.Unlock()
		return first(cms[ConfigMapName], cms[ArgoConfigMapName]), first(secrets[SecretName], secrets[ArgoSecretName])
	}
	select { // what the watches said so far is in current
	case <-changed:
	default:
	}
	on(current())
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-changed:
				on(current())
			}
		}
	}()
	return nil
}

// first is a, or b when a is nil.
func first[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}
