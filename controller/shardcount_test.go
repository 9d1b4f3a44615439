package controller

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCountShards(t *testing.T) {
	now := time.Now()
	lease := func(name string, renewed time.Duration) coordinationv1.Lease {
		return coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now.Add(-renewed)}}}
	}
	since := now.Add(-time.Minute)
	for _, tc := range []struct {
		name   string
		leases []coordinationv1.Lease
		least  int
		want   int
	}{
		{"no Lease: the least", nil, 2, 2},
		{"a third shard joins", []coordinationv1.Lease{lease(LeaseName(0), time.Second), lease(LeaseName(1), time.Second), lease(LeaseName(2), 0)}, 2, 3},
		{"a shard failing over still counts", []coordinationv1.Lease{lease(LeaseName(0), 0), lease(LeaseName(2), 20*time.Second)}, 1, 3},
		{"a shard gone past grace does not", []coordinationv1.Lease{lease(LeaseName(0), 0), lease(LeaseName(2), 2*time.Minute)}, 2, 2},
		{"never below the least", []coordinationv1.Lease{lease(LeaseName(0), 0)}, 3, 3},
		{"other Leases and odd names are ignored", []coordinationv1.Lease{
			lease("graphcd-controller-shard-07", 0), lease("graphcd-controller-shard--1", 0), lease("graphcd-controller-shard-x", 0),
			lease("graphcd-controller-shard-", 0), lease("something-else-9", 0), {ObjectMeta: metav1.ObjectMeta{Name: LeaseName(5)}},
		}, 1, 1},
	} {
		if got := countShards(tc.leases, since, tc.least); got != tc.want {
			t.Errorf("%s: %d shards, want %d", tc.name, got, tc.want)
		}
	}
}

func TestDynamicShardValidate(t *testing.T) {
	if err := (Shard{Index: 2, Count: 2, Dynamic: true}).Validate(); err != nil {
		t.Errorf("a dynamic shard joining past --shards: %v", err)
	}
	if err := (Shard{Index: -1, Count: 2, Dynamic: true}).Validate(); err == nil {
		t.Error("a negative dynamic shard was accepted")
	}
	s := Shard{Index: 2, Count: 2, Dynamic: true}
	s.live = newLiveCount(s)
	if s.count() != 3 || s.String() != "2/3" {
		t.Errorf("a joining shard counts %d (%s), want itself among 3", s.count(), s)
	}
	// Every copy shares the count the counter finds.
	copied := s
	s.live.Store(4)
	if copied.count() != 4 || copied.withCount(3).count() != 3 {
		t.Errorf("copies count %d and %d, want 4 and 3", copied.count(), copied.withCount(3).count())
	}
}
