package controller

import (
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

func TestLeaderElectionValidate(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name string
		le   LeaderElection
		want string // "" = valid
	}{
		{"defaults", LeaderElection{}, ""},
		{"explicit defaults", LeaderElection{LeaseDuration: 15 * s, RenewDeadline: 10 * s, RetryPeriod: 2 * s}, ""},
		{"short", LeaderElection{LeaseDuration: 4 * s, RenewDeadline: 3 * s, RetryPeriod: 500 * time.Millisecond}, ""},
		{"lease not longer than renew", LeaderElection{LeaseDuration: 10 * s}, "lease duration 10s must be longer than the renew deadline 10s"},
		{"renew too close to retry", LeaderElection{RenewDeadline: 2 * s}, "renew deadline 2s must be longer than 1.2 × the retry period 2s"},
		{"negative", LeaderElection{RetryPeriod: -s}, "leader election durations must be positive, got lease 15s, renew deadline 10s, retry period -1s"},
	} {
		got := ""
		if err := tc.le.Validate(); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: Validate() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLeaseName(t *testing.T) {
	if got := LeaseName(3); got != "graphcd-controller-shard-3" {
		t.Errorf("LeaseName(3) = %q", got)
	}
}

// configure turns on Lease-based leader election with release on cancel,
// the shard's Lease name and an identity unique per process.
func TestLeaderElectionConfigure(t *testing.T) {
	var a, b ctrl.Options
	cfg := &rest.Config{Host: "https://127.0.0.1:6443"}
	la, err := LeaderElection{Enabled: true}.configure(&a, cfg, "graphcd", 2)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := LeaderElection{Enabled: true, RetryPeriod: time.Second}.configure(&b, cfg, "graphcd", 2)
	if err != nil {
		t.Fatal(err)
	}
	if !a.LeaderElection || !a.LeaderElectionReleaseOnCancel || a.LeaderElectionID != "graphcd-controller-shard-2" ||
		a.LeaderElectionNamespace != "graphcd" || a.LeaderElectionResourceLock != "leases" || a.LeaderElectionResourceLockInterface == nil {
		t.Errorf("options = %+v, want leases lock graphcd/graphcd-controller-shard-2 released on cancel", a)
	}
	if *a.LeaseDuration != DefaultLeaseDuration || *a.RenewDeadline != DefaultRenewDeadline || *b.RetryPeriod != time.Second {
		t.Errorf("durations %s/%s/%s, want the defaults and the given retry period", *a.LeaseDuration, *a.RenewDeadline, *b.RetryPeriod)
	}
	if la.Identity == lb.Identity || !strings.Contains(la.Identity, "_") {
		t.Errorf("identities %q and %q, want host_random, distinct", la.Identity, lb.Identity)
	}
	if got := a.LeaderElectionResourceLockInterface.Identity(); got != la.Identity {
		t.Errorf("lock identity %q, want %q", got, la.Identity)
	}
	if _, err := (LeaderElection{Enabled: true, LeaseDuration: time.Second}).configure(&ctrl.Options{}, cfg, "graphcd", 0); err == nil {
		t.Error("configure accepted a lease shorter than the renew deadline")
	}
}
