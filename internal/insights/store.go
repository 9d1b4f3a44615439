package insights

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// The names of the log ConfigMaps: one per app, in graphcd's namespace,
// labelled so that the API watches them alone.
const (
	// Label marks a ConfigMap as an app's delivery log.
	Label = "graphcd.io/insights"
	// The annotations name the app (a label value could not hold every
	// name) and its project at the last write.
	AnnotationNamespace = "graphcd.io/insights-app-namespace"
	AnnotationName      = "graphcd.io/insights-app-name"
	AnnotationProject   = "graphcd.io/insights-app-project"
	// DataKey holds the records (Encode's JSON lines).
	DataKey = "records"
	// namePrefix starts the ConfigMaps' names.
	namePrefix = "graphcd-insights-"
)

// ConfigMapName is the name of the log ConfigMap of the app key: a hash,
// since namespace and name together may be longer than a name may be.
func ConfigMapName(key Key) string {
	sum := sha256.Sum256([]byte(key.Namespace + "/" + key.Name))
	return namePrefix + hex.EncodeToString(sum[:10])
}

// Store keeps apps' logs in ConfigMaps of Namespace: the management
// cluster is graphcd's database, so a log survives restarts of every
// part, and each app's is bounded by Trim.
//
// Once Watch has listed the logs, Load reads them from its watch and
// Append starts from the watched copy, reading the API only when that
// copy turns out stale: a first comparison of 10,000 apps is then 10,000
// writes rather than as many reads besides.
type Store struct {
	Client    kubernetes.Interface
	Namespace string

	watched atomic.Pointer[cache.Indexer] // set by Watch once listed
}

// Watch keeps a copy of every log of the namespace until ctx ends,
// returning once it listed them (or the error that kept it from it);
// Load and Append read the API until then.
func (s *Store) Watch(ctx context.Context) error {
	inf := logInformer(s.Client, s.Namespace)
	// Only the records are read and an update leaves the field managers
	// as they were: they need not take memory.
	err := inf.SetTransform(func(obj any) (any, error) {
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			cm.ManagedFields = nil
		}
		return obj, nil
	})
	if err != nil {
		return err
	}
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return errNeverListed(ctx)
	}
	idx := inf.GetIndexer()
	s.watched.Store(&idx)
	go func() {
		<-ctx.Done()
		s.watched.Store(nil)
	}()
	return nil
}

// get reads the log ConfigMap name: from the watch when cached and there
// is one (a copy the caller may change), else from the API.
func (s *Store) get(ctx context.Context, name string, cached bool) (*corev1.ConfigMap, error) {
	if idx := s.watched.Load(); cached && idx != nil {
		obj, ok, err := (*idx).GetByKey(s.Namespace + "/" + name)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), name)
		}
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			return cm.DeepCopy(), nil
		}
	}
	return s.Client.CoreV1().ConfigMaps(s.Namespace).Get(ctx, name, metav1.GetOptions{})
}

// Load returns the log of the app key, empty when there is none.
func (s *Store) Load(ctx context.Context, key Key) ([]Record, error) {
	cm, err := s.get(ctx, ConfigMapName(key), true)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the insights log of %s/%s: %w", key.Namespace, key.Name, err)
	}
	_, recs, err := Parse(cm)
	return recs, err
}

// Append adds records to app's log, trimmed as of now.
func (s *Store) Append(ctx context.Context, app App, records []Record, now time.Time) error {
	if len(records) == 0 {
		return nil
	}
	for _, r := range records {
		if err := r.Validate(); err != nil {
			return err
		}
	}
	cms := s.Client.CoreV1().ConfigMaps(s.Namespace)
	name := ConfigMapName(Key{app.Namespace, app.Name})
	attempt := 0
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		// The watched copy first; after a conflict, the API's.
		attempt++
		cm, err := s.get(ctx, name, attempt == 1)
		if apierrors.IsNotFound(err) {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace}}
			cm.Labels = map[string]string{Label: "log"}
			cm.Annotations = map[string]string{AnnotationNamespace: app.Namespace, AnnotationName: app.Name, AnnotationProject: app.Project}
			cm.Data = map[string]string{DataKey: Encode(Trim(append([]Record(nil), records...), now))}
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(corev1.Resource("configmaps"), name, err)
			}
			return err
		}
		if err != nil {
			return err
		}
		_, old, err := Parse(cm)
		if err != nil {
			// A log that cannot be read is started again rather than
			// block every later record.
			old = nil
		}
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[AnnotationProject] = app.Project
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[DataKey] = Encode(Trim(append(old, records...), now))
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("append to the insights log of %s/%s: %w", app.Namespace, app.Name, err)
	}
	return nil
}

// Parse reads an app's log ConfigMap.
func Parse(cm *corev1.ConfigMap) (App, []Record, error) {
	app := App{Namespace: cm.Annotations[AnnotationNamespace], Name: cm.Annotations[AnnotationName], Project: cm.Annotations[AnnotationProject]}
	if app.Name == "" {
		return app, nil, fmt.Errorf("insights log %s names no app (annotation %s)", cm.Name, AnnotationName)
	}
	recs, err := Decode(cm.Data[DataKey])
	if err != nil {
		return app, nil, fmt.Errorf("insights log %s: %w", cm.Name, err)
	}
	return app, recs, nil
}

// Follow loads every log of namespace into x and keeps x current with a
// watch of the log ConfigMaps until ctx ends. It returns once x holds
// the logs that existed, or the error that kept it from listing them.
func Follow(ctx context.Context, client kubernetes.Interface, namespace string, x *Index, log *slog.Logger) error {
	inf := logInformer(client, namespace)
	set := func(obj any) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return
		}
		app, recs, err := Parse(cm)
		if err != nil {
			log.Warn("insights: skip an unreadable log", "configmap", cm.Name, "err", err)
			return
		}
		x.Set(app, Trim(recs, time.Now()))
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if cm, ok := obj.(*corev1.ConfigMap); ok {
				x.Delete(Key{cm.Annotations[AnnotationNamespace], cm.Annotations[AnnotationName]})
			}
		},
	}); err != nil {
		return err
	}
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return errNeverListed(ctx)
	}
	return nil
}

// logInformer watches the log ConfigMaps of namespace.
func logInformer(client kubernetes.Interface, namespace string) cache.SharedIndexInformer {
	return coreinformers.NewFilteredConfigMapInformer(client, namespace, 0, cache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = Label })
}

// errNeverListed is why a watch of the logs did not start.
func errNeverListed(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.New("insights: the log ConfigMaps never listed")
}
