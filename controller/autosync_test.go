package controller

import (
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// An app whose automated sync was just requested waits behind an app
// queued later for a change of its own; a sync a person requests does not.
func TestAppEventsQueueAutoSyncLater(t *testing.T) {
	app := func(name, version string, op *v1alpha1.Operation) *v1alpha1.Application {
		return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: name, ResourceVersion: version}, Operation: op}
	}
	auto := &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}}
	manual := &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}
	for _, tc := range []struct {
		name        string
		op          *v1alpha1.Operation
		lowPriority bool
	}{
		{"automated", auto, true},
		{"manual", manual, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := priorityqueue.New[reconcile.Request]("test")
			defer q.ShutDown()
			h := &appEvents{}
			h.Update(t.Context(), event.UpdateEvent{ObjectOld: app("synced", "1", nil), ObjectNew: app("synced", "2", tc.op)}, q)
			h.Update(t.Context(), event.UpdateEvent{ObjectOld: app("changed", "1", nil), ObjectNew: app("changed", "2", nil)}, q)
			var got []string
			for range 2 {
				r, priority, _ := q.GetWithPriority()
				got = append(got, fmt.Sprintf("%s@%d", r.Name, priority))
			}
			want := []string{"synced@0", "changed@0"} // in the order queued
			if tc.lowPriority {
				want = []string{"changed@0", fmt.Sprintf("synced@%d", handler.LowPriority)}
			}
			if !slices.Equal(got, want) {
				t.Errorf("out of the queue: %v, want %v", got, want)
			}
		})
	}
}
