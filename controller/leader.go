package controller

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Defaults of LeaderElection, those of Kubernetes' own controllers.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// LeaderElection makes the replicas of one shard compete for a Lease
// (coordination.k8s.io/v1, named LeaseName(shard) in the controller's
// namespace), so that only its holder reconciles. The others stand by
// without informers and without writing anything, and one of them takes
// over when the holder stops renewing. A leader that shuts down cleanly
// releases the Lease at once.
type LeaderElection struct {
	// Enabled turns leader election on; off, the controller reconciles as
	// soon as it starts.
	Enabled bool
	// Identity names this replica in the Lease's holderIdentity (default:
	// the host name, then "_" and random hex, unique per process).
	Identity string
	// LeaseDuration is how long a Lease not renewed stays valid: how long
	// standbys wait before taking over from a leader that vanished
	// (default 15 s).
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps trying to renew before it
	// gives up leading and stops (default 10 s).
	RenewDeadline time.Duration
	// RetryPeriod is how often candidates try to acquire or renew the Lease
	// (default 2 s).
	RetryPeriod time.Duration
}

// LeaseName returns the name of the Lease the replicas of shard compete
// for, e.g. graphcd-controller-shard-0.
func LeaseName(shard int) string { return leasePrefix + strconv.Itoa(shard) }

// leasePrefix begins every shard's Lease name.
const leasePrefix = "graphcd-controller-shard-"

// withDefaults fills the zero durations and the identity.
func (l LeaderElection) withDefaults() (LeaderElection, error) {
	if l.LeaseDuration == 0 {
		l.LeaseDuration = DefaultLeaseDuration
	}
	if l.RenewDeadline == 0 {
		l.RenewDeadline = DefaultRenewDeadline
	}
	if l.RetryPeriod == 0 {
		l.RetryPeriod = DefaultRetryPeriod
	}
	if l.Identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return l, fmt.Errorf("leader election identity: %w", err)
		}
		suffix := make([]byte, 6)
		if _, err := rand.Read(suffix); err != nil {
			return l, fmt.Errorf("leader election identity: %w", err)
		}
		l.Identity = host + "_" + hex.EncodeToString(suffix)
	}
	return l, nil
}

// Validate reports timings the Lease protocol cannot work with: the lease
// must outlast the renew deadline, and the renew deadline must leave room
// for more than one retry (client-go's rule: renew deadline > 1.2 × retry
// period). Zero durations take their defaults.
func (l LeaderElection) Validate() error {
	l, err := l.withDefaults()
	if err != nil {
		return err
	}
	switch {
	case l.LeaseDuration < 0 || l.RenewDeadline < 0 || l.RetryPeriod < 0:
		return fmt.Errorf("leader election durations must be positive, got lease %s, renew deadline %s, retry period %s", l.LeaseDuration, l.RenewDeadline, l.RetryPeriod)
	case l.LeaseDuration <= l.RenewDeadline:
		return fmt.Errorf("lease duration %s must be longer than the renew deadline %s", l.LeaseDuration, l.RenewDeadline)
	case float64(l.RenewDeadline) <= leaderelection.JitterFactor*float64(l.RetryPeriod):
		return fmt.Errorf("renew deadline %s must be longer than %.1f × the retry period %s", l.RenewDeadline, leaderelection.JitterFactor, l.RetryPeriod)
	}
	return nil
}

// configure turns on the manager's leader election for shard, with a Lease
// lock of its own so that the identity is known (and logged). It returns
// the completed settings.
func (l LeaderElection) configure(opts *ctrl.Options, cfg *rest.Config, namespace string, shard int) (LeaderElection, error) {
	l, err := l.withDefaults()
	if err != nil {
		return l, err
	}
	if err := l.Validate(); err != nil {
		return l, err
	}
	// A hung request must not outlast the renew deadline, or one slow
	// answer costs the lease (client-go's advice: half of it).
	lcfg := rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	lcfg.Timeout = max(l.RenewDeadline/2, time.Second)
	clients, err := kubernetes.NewForConfig(lcfg)
	if err != nil {
		return l, fmt.Errorf("leader election client: %w", err)
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, LeaseName(shard),
		clients.CoreV1(), clients.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: l.Identity})
	if err != nil {
		return l, fmt.Errorf("leader election lock: %w", err)
	}
	opts.LeaderElection = true
	opts.LeaderElectionID = LeaseName(shard)
	opts.LeaderElectionNamespace = namespace
	opts.LeaderElectionResourceLock = resourcelock.LeasesResourceLock
	opts.LeaderElectionResourceLockInterface = lock
	opts.LeaderElectionReleaseOnCancel = true
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = &l.LeaseDuration, &l.RenewDeadline, &l.RetryPeriod
	return l, nil
}

// leading logs when this replica wins its shard's Lease; it runs only on
// the leader.
type leading struct {
	lease    string
	identity string
	log      *slog.Logger
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (l *leading) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable.
func (l *leading) Start(ctx context.Context) error {
	l.log.Info("leading the shard", "lease", l.lease, "identity", l.identity)
	<-ctx.Done()
	return nil
}
