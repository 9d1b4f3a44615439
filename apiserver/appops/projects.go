package appops

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/audit"
)

// ErrProjectInUse: a project that applications still use cannot be
// deleted (as in Argo CD).
var ErrProjectInUse = errors.New("the project is used by applications")

// CreateProject creates p. With upsert, an existing project of that name
// gets p's spec, labels and annotations instead.
func (s Service) CreateProject(ctx context.Context, p *v1alpha1.AppProject, upsert bool) (*v1alpha1.AppProject, error) {
	err := s.Client.Create(ctx, p)
	if err == nil {
		audit.Change(ctx, nil, p)
	}
	if err == nil || !upsert || !apierrors.IsAlreadyExists(err) {
		return p, err
	}
	return s.UpdateProject(ctx, client.ObjectKeyFromObject(p), func(cur *v1alpha1.AppProject) {
		cur.Spec, cur.Labels, cur.Annotations = p.Spec, p.Labels, p.Annotations
	})
}

// UpdateProject applies change to the project at key and writes it with
// its resourceVersion, retrying on conflicts.
func (s Service) UpdateProject(ctx context.Context, key types.NamespacedName, change func(*v1alpha1.AppProject)) (*v1alpha1.AppProject, error) {
	var out *v1alpha1.AppProject
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &v1alpha1.AppProject{}
		if err := s.Client.Get(ctx, key, cur); err != nil {
			return err
		}
		before := cur.DeepCopy()
		change(cur)
		if err := s.Client.Update(ctx, cur); err != nil {
			return err
		}
		audit.Change(ctx, before, cur)
		out = cur
		return nil
	})
	return out, err
}

// DeleteProject deletes the project at key unless an application in the
// project's namespace uses it.
func (s Service) DeleteProject(ctx context.Context, key types.NamespacedName) error {
	var apps v1alpha1.ApplicationList
	if err := s.Client.List(ctx, &apps, client.InNamespace(key.Namespace)); err != nil {
		return fmt.Errorf("list applications: %w", err)
	}
	for _, a := range apps.Items {
		if a.Spec.Project == key.Name || (a.Spec.Project == "" && key.Name == "default") {
			return fmt.Errorf("%w (%s and maybe others)", ErrProjectInUse, a.Name)
		}
	}
	p := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := s.Client.Delete(ctx, p); err != nil {
		return err
	}
	audit.Change(ctx, p, nil)
	return nil
}
