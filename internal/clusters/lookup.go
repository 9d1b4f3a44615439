package clusters

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/secretcodec"
)

// ErrNotFound is wrapped by the lookup errors for a cluster nobody
// registered.
var ErrNotFound = errors.New("cluster not registered")

// ByServer returns the cluster whose API server is server (trailing
// slashes ignored).
func (r *Registry) ByServer(server string) (*Cluster, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.byServer[secretcodec.NormaliseServer(server)]
	return c, ok
}

// ByName returns the cluster registered as name.
func (r *Registry) ByName(name string) (*Cluster, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.byName[name]
	return c, ok
}

// List returns every usable cluster, sorted by name then server.
func (r *Registry) List() []*Cluster {
	r.mu.RLock()
	out := make([]*Cluster, 0, len(r.byServer))
	for _, c := range r.byServer {
		out = append(out, c)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Cluster) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Server, b.Server))
	})
	return out
}

// Errors returns why each invalid cluster Secret is ignored, sorted by
// Secret. The errors are safe to show: they hold no credentials.
func (r *Registry) Errors() []error {
	r.mu.RLock()
	var broken []*entry
	for _, e := range r.entries {
		if e.err != nil {
			broken = append(broken, e)
		}
	}
	r.mu.RUnlock()
	slices.SortFunc(broken, func(a, b *entry) int { return cmp.Compare(a.key, b.key) })
	out := make([]error, len(broken))
	for i, e := range broken {
		out[i] = e.err
	}
	return out
}

// Resolve finds the cluster an application destination points at, by the
// rules Argo CD applies: server or name; both only when the named cluster
// has that server.
func (r *Registry) Resolve(dest v1alpha1.ApplicationDestination) (*Cluster, error) {
	switch {
	case dest.Server == "" && dest.Name == "":
		return nil, errors.New("application destination has neither a server nor a name: set one of them")
	case dest.Name == "":
		if c, ok := r.ByServer(dest.Server); ok {
			return c, nil
		}
		return nil, r.notFound(func(e *entry) bool { return e.server == secretcodec.NormaliseServer(dest.Server) },
			fmt.Errorf("cluster %s not found: %w", dest.Server, ErrNotFound))
	}
	c, ok := r.ByName(dest.Name)
	if !ok {
		return nil, r.notFound(func(e *entry) bool { return e.name == dest.Name },
			fmt.Errorf("there are no clusters with this name: %s: %w", dest.Name, ErrNotFound))
	}
	if dest.Server != "" && secretcodec.NormaliseServer(dest.Server) != c.Server {
		return nil, fmt.Errorf("application destination can't have both name and server defined unless they agree: cluster %s has server %s, not %s", dest.Name, c.Server, dest.Server)
	}
	return c, nil
}

// notFound explains a failed lookup with the error of an invalid Secret
// that claims the cluster, if there is one.
func (r *Registry) notFound(claims func(*entry) bool, fallback error) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var broken []*entry
	for _, e := range r.entries {
		if e.err != nil && claims(e) {
			broken = append(broken, e)
		}
	}
	if len(broken) == 0 {
		return fallback
	}
	slices.SortFunc(broken, func(a, b *entry) int { return cmp.Compare(a.key, b.key) })
	return fmt.Errorf("%w; its Secret is invalid: %w", fallback, broken[0].err)
}
