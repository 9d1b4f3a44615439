package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/repourl"
)

// appMemory is what the reconciler remembers of each app between its
// reconciles, beside the Application itself. It lives in memory only: a
// restarted controller starts with none, and the first reconcile of each
// app fills it again. It has a lock of its own, held only to read or
// write one entry.
type appMemory struct {
	mu sync.RWMutex
	// states is each app's last comparison (see Reconciler.State).
	states map[types.NamespacedName]*AppState
	// written is each app's resourceVersion as its last reconcile left it.
	written map[types.NamespacedName]string
	// announced is the sync and health status of each app's last
	// announcement (see Reconciler.announce).
	announced map[types.NamespacedName]announcedStatus
	// servers is the destination server of every claimed app ("" when it
	// did not resolve), so that a cluster's cache events refresh only the
	// apps of that cluster.
	servers map[types.NamespacedName]string
	// failures counts each app's comparisons that failed in a row, and
	// may succeed when tried again (see comparisonRetry).
	failures map[types.NamespacedName]int
}

func newAppMemory() *appMemory {
	return &appMemory{
		states: map[types.NamespacedName]*AppState{}, written: map[types.NamespacedName]string{},
		announced: map[types.NamespacedName]announcedStatus{}, servers: map[types.NamespacedName]string{},
		failures: map[types.NamespacedName]int{},
	}
}

// compared records whether app's comparison failed in a way a retry may
// mend, and returns how many of its comparisons in a row did.
func (m *appMemory) compared(app types.NamespacedName, failed bool) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !failed {
		delete(m.failures, app)
		return 0
	}
	m.failures[app]++
	return m.failures[app]
}

// state returns the last comparison of app, or nil.
func (m *appMemory) state(app types.NamespacedName) *AppState {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.states[app]
}

// setState records the last comparison of app.
func (m *appMemory) setState(app types.NamespacedName, st *AppState) {
	m.mu.Lock()
	m.states[app] = st
	m.mu.Unlock()
}

// wrote records app's resourceVersion as the one this controller's last
// write of it left, so that its next reconcile reads past a cache that has
// not seen that write.
func (m *appMemory) wrote(app *v1alpha1.Application) {
	m.mu.Lock()
	m.written[types.NamespacedName{Namespace: app.Namespace, Name: app.Name}] = app.ResourceVersion
	m.mu.Unlock()
}

// behind reports whether rv (the cached app's) may be older than what the
// last reconcile of app in this process left, its own writes included.
// Versions are opaque, so any other version counts (a newer one only
// costs a read). Before the first reconcile the cache, filled by a fresh
// list, is current.
func (m *appMemory) behind(app types.NamespacedName, rv string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	last, ok := m.written[app]
	return ok && last != rv
}

// announce records now as app's last announcement and returns the one
// before it, or was when there was none.
func (m *appMemory) announce(app types.NamespacedName, was, now announcedStatus) announcedStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	if last, ok := m.announced[app]; ok {
		was = last
	}
	m.announced[app] = now
	return was
}

// claim records that this controller reconciles app, on the cluster at
// server ("" when its destination did not resolve).
func (m *appMemory) claim(app types.NamespacedName, server string) {
	m.mu.Lock()
	m.servers[app] = server
	m.mu.Unlock()
}

// onCluster reports whether app's destination is the cluster at server,
// as its last reconcile resolved it; an app not reconciled yet counts as
// on every cluster.
func (m *appMemory) onCluster(app types.NamespacedName, server string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.servers[app]
	return !ok || s == server
}

// claimed splits apps into those this controller reconciles and the rest,
// each in the order given.
func (m *appMemory) claimed(apps []types.NamespacedName) (local, rest []types.NamespacedName) {
	local = make([]types.NamespacedName, 0, len(apps))
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, key := range apps {
		if _, ok := m.servers[key]; ok {
			local = append(local, key)
		} else {
			rest = append(rest, key)
		}
	}
	return local, rest
}

// release drops what is kept of an app another shard reconciles. The
// version last written stays, so that a reconcile after the app comes
// back still reads past a cache that has not seen that write.
func (m *appMemory) release(app types.NamespacedName) {
	m.mu.Lock()
	delete(m.states, app)
	delete(m.servers, app)
	delete(m.announced, app)
	delete(m.failures, app)
	m.mu.Unlock()
}

// forget drops everything kept of an app that is gone.
func (m *appMemory) forget(app types.NamespacedName) {
	m.mu.Lock()
	delete(m.states, app)
	delete(m.written, app)
	delete(m.announced, app)
	delete(m.servers, app)
	delete(m.failures, app)
	m.mu.Unlock()
}

// claimedApp reports whether this controller's shard claimed app (see
// Reconciler.claim) and has not released or forgotten it since.
func (m *appMemory) claimedApp(app types.NamespacedName) bool {
	m.mu.RLock()
	_, ok := m.servers[app]
	m.mu.RUnlock()
	return ok
}

// appsByServer counts the claimed apps on each destination server.
func (m *appMemory) appsByServer() map[string]int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := map[string]int{}
	for _, s := range m.servers {
		if s != "" {
			out[s]++
		}
	}
	return out
}

// maxRepoSet bounds a repoSet; past it the set starts again, which costs
// one more resolution per repository.
const maxRepoSet = 10000

// repoSet is a set of repository URLs, normalised.
type repoSet struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

// first adds repoURL and reports whether it was new.
func (s *repoSet) first(repoURL string) bool {
	key := repourl.Normalize(repoURL)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[key]; ok {
		return false
	}
	if s.seen == nil || len(s.seen) >= maxRepoSet {
		s.seen = map[string]struct{}{}
	}
	s.seen[key] = struct{}{}
	return true
}
