// Package resourceversion compares Kubernetes resourceVersions, for a
// reader that waits until a cache has caught up with a write.
package resourceversion

import "strconv"

// AtLeast reports whether have is want or a later version. Kubernetes
// calls resourceVersions opaque; the API server's are etcd revisions,
// compared as numbers here, and a version that is not a number counts as
// caught up, so that a wait on it ends.
func AtLeast(have, want string) bool {
	if have == want {
		return true
	}
	h, err1 := strconv.ParseUint(have, 10, 64)
	w, err2 := strconv.ParseUint(want, 10, 64)
	return err1 != nil || err2 != nil || h > w
}
