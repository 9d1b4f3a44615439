package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/apiserver/audit"
)

// auditOptions are the flags of `graphcd server` about the audit trail.
type auditOptions struct {
	size int
}

func (o *auditOptions) addFlags(f *pflag.FlagSet) {
	f.IntVar(&o.size, "audit-log-size", audit.DefaultSize,
		"how many mutations the audit log keeps (in Redis with --redis, shared by replicas; else in memory); older entries are dropped")
}

// setUp returns the audit log of the server: its store (in Redis with
// --redis, else in memory) and its Kubernetes Events in namespace.
func (o *auditOptions) setUp(ctx context.Context, kc kubernetes.Interface, namespace string, sh *shared, log *slog.Logger) (*audit.Log, audit.Store, error) {
	if o.size <= 0 {
		return nil, nil, fmt.Errorf("--audit-log-size must be positive, got %d", o.size)
	}
	var store audit.Store = audit.NewMemory(o.size)
	if sh.redis != nil {
		rs, err := audit.NewRedis(sh.redis, "", o.size, sh.secret, log)
		if err != nil {
			return nil, nil, fmt.Errorf("--redis-secret-file: %w", err)
		}
		go func() {
			if err := rs.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("audit entries over Redis stopped", "err", err)
			}
		}()
		store = rs
	}
	instance, _ := os.Hostname() // a Pod's name
	return &audit.Log{Store: store, Events: audit.NewEventWriter(kc, namespace, instance), Logger: log}, store, nil
}
