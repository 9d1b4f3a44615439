//go:build integration

package console

import "testing"

// TestClusterStatusPage drives Settings → Clusters in Chromium against a
// server running its controller: in-cluster shows Successful with its
// version and cache, and the admin sees the API replica, the controller
// leading shard 0 with its memory, and the repository server (see
// web/e2e/cluster-status.mjs).
func TestClusterStatusPage(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t, true)
	runScript(t, "e2e/cluster-status.mjs", base, ns)
}
