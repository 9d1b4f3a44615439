package main

import (
	"context"
	"log/slog"

	"github.com/graphcd/graphcd/internal/memguard"
)

// memoryGuard watches the process's memory against its limit until ctx
// ends, for the back-pressure of internal/memguard. Every role makes one.
// The limit is GOMEMLIMIT's, else 90% of the container's; without either
// the guard never reports pressure.
func memoryGuard(ctx context.Context, log *slog.Logger) *memguard.Guard {
	from := "GOMEMLIMIT"
	if memguard.LimitFromContainer("/sys/fs/cgroup", memguard.DefaultContainerShare) > 0 {
		from = "the container's limit"
	}
	g := memguard.New(memguard.Options{Logger: log})
	if limit := g.State().Limit; limit > 0 {
		log.Info("memory limit", "limitMiB", limit>>20, "from", from, "pressureAboveMiB", int64(float64(limit)*memguard.DefaultHigh)>>20)
	}
	go g.Run(ctx)
	return g
}
