package appops

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/audit"
)

// object is a graphcd resource the Service reads and writes: P is *T.
type object[T any] interface {
	*T
	client.Object
}

// getObject reads the object at key from the API server, nil when there
// is none.
func getObject[T any, P object[T]](ctx context.Context, c client.Client, key types.NamespacedName) (P, error) {
	obj := P(new(T))
	err := c.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return obj, nil
}

// createObject creates obj (of resource, for errors). When the name is
// taken, mayReplace first judges the existing object as read for this
// very write (so a concurrent change cannot slip past it) and its error
// ends the call; then, with upsert, replace carries obj's fields over to
// the existing one, which is written back; without, the AlreadyExists
// error is returned.
func createObject[T any, P object[T]](ctx context.Context, c client.Client, obj P, resource string, upsert bool, mayReplace func(existing P) error, replace func(cur, obj P)) (P, error) {
	err := c.Create(ctx, obj)
	if err == nil {
		audit.Change(ctx, nil, obj)
	}
	if err == nil || !apierrors.IsAlreadyExists(err) {
		return obj, err
	}
	key := client.ObjectKeyFromObject(obj)
	if !upsert {
		existing, getErr := getObject[T, P](ctx, c, key)
		if getErr != nil {
			return nil, getErr
		}
		if existing == nil {
			gr := v1alpha1.GroupVersion.WithResource(resource).GroupResource()
			return nil, apierrors.NewConflict(gr, obj.GetName(), errors.New("deleted while being created"))
		}
		if judged := mayReplace(existing); judged != nil {
			return nil, judged
		}
		return nil, err
	}
	return updateObject[T, P](ctx, c, key, func(cur P) error {
		if err := mayReplace(cur); err != nil {
			return err
		}
		replace(cur, obj)
		return nil
	})
}

// updateObject lets change modify the object at key and writes it back
// with its resourceVersion, retrying with a fresh read on conflicts (so
// change must be repeatable). An error from change ends it without
// writing.
func updateObject[T any, P object[T]](ctx context.Context, c client.Client, key types.NamespacedName, change func(P) error) (P, error) {
	var out P
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := P(new(T))
		if err := c.Get(ctx, key, cur); err != nil {
			return err
		}
		audit.Touch(ctx, cur)
		before := cur.DeepCopyObject()
		if err := change(cur); err != nil {
			return err
		}
		if err := c.Update(ctx, cur); err != nil {
			return err
		}
		audit.Change(ctx, before, cur)
		out = cur
		return nil
	})
	return out, err
}
