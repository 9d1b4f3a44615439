package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/graphcd/graphcd/internal/testenv/roles"
)

// saveProfile writes the runtime profile at path (/debug/pprof/...) of
// the process serving them on listen to dir/name, when there is a dir.
func saveProfile(ctx context.Context, listen, path, dir, name string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+listen+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile %s: %w", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", path, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("profile %s: %w", path, err)
	}
	return os.WriteFile(filepath.Join(dir, name), b, 0o644) //nolint:gosec // a profile for the person who ran the load
}

// saveHeap writes the heap profile (after a garbage collection, so it
// holds what is live) of the process serving profiles on listen. Compare
// two to see what grew:
// go tool pprof -sample_index=inuse_space -base heap-warmup.pb.gz heap-end.pb.gz
func saveHeap(ctx context.Context, listen, dir, name string) error {
	return saveProfile(ctx, listen, "/debug/pprof/heap?gc=1", dir, name)
}

// roleProfiles saves the profiles of a scale run's roles into dir
// (--profiles), named <role>-<kind>-<phase>.pb.gz; with no dir it does
// nothing.
type roleProfiles struct {
	dir   string
	roles func() []*roles.Role
	log   *slog.Logger
}

// heap saves every role's heap profile now.
func (p roleProfiles) heap(ctx context.Context, phase string) {
	if p.dir == "" {
		return
	}
	for _, r := range p.roles() {
		if err := saveHeap(ctx, r.ProfileAddr, p.dir, r.Name+"-heap-"+phase+".pb.gz"); err != nil {
			p.log.Warn("heap profile", "role", r.Name, "err", err)
		}
	}
}

// cpu starts every role's CPU profile over the next d and returns a
// function that waits until they are saved.
func (p roleProfiles) cpu(ctx context.Context, phase string, d time.Duration) (wait func()) {
	if p.dir == "" {
		return func() {}
	}
	var wg sync.WaitGroup
	path := "/debug/pprof/profile?seconds=" + strconv.Itoa(max(1, int(d.Seconds())))
	for _, r := range p.roles() {
		wg.Go(func() {
			if err := saveProfile(ctx, r.ProfileAddr, path, p.dir, r.Name+"-cpu-"+phase+".pb.gz"); err != nil {
				p.log.Warn("CPU profile", "role", r.Name, "err", err)
			}
		})
	}
	return wg.Wait
}
