package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// Bad sharding and Lease flags fail before anything connects, as one line
// with exit code 2, for `graphcd controller` and `graphcd server` alike.
func TestControllerFlagErrors(t *testing.T) {
	tests := []struct {
		env  map[string]string
		args []string
		want string // stderr
	}{
		{
			args: []string{"controller", "--shards", "0"},
			want: "graphcd: --shards: must be at least 1, got 0\n",
		},
		{
			args: []string{"controller", "--shards", "2", "--shard", "2"},
			want: "graphcd: --shard: must be between 0 and 1 with --shards 2 (shards are numbered from 0), got 2\n",
		},
		{
			args: []string{"server", "--shard", "-1"},
			want: "graphcd: --shard: must be between 0 and 0 with --shards 1 (shards are numbered from 0), got -1\n",
		},
		{
			env:  map[string]string{"GRAPHCD_SHARDS": "3", "GRAPHCD_SHARD": "5"},
			args: []string{"controller"},
			want: "graphcd: GRAPHCD_SHARD: must be between 0 and 2 with GRAPHCD_SHARDS 3 (shards are numbered from 0), got 5\n",
		},
		{
			args: []string{"controller", "--sharding-method", "legacy"},
			want: "graphcd: --sharding-method: unknown sharding method \"legacy\": use hash or round-robin\n",
		},
		{
			args: []string{"controller", "--leader-elect-retry-period", "0s"},
			want: "graphcd: --leader-elect-retry-period: must be positive, got 0s\n",
		},
		{
			args: []string{"controller", "--leader-elect-lease-duration", "5s"},
			want: "graphcd: --leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period: lease duration 5s must be longer than the renew deadline 10s\n",
		},
		{
			args: []string{"server", "--leader-elect", "--leader-elect-renew-deadline", "2s"},
			want: "graphcd: --leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period: renew deadline 2s must be longer than 1.2 × the retry period 2s\n",
		},
		{
			args: []string{"server", "--status-processors", "0"},
			want: "graphcd: --status-processors: must be at least 1, got 0\n",
		},
		{
			args: []string{"controller", "--event-qps", "-1"},
			want: "graphcd: --event-qps: must not be negative, got -1\n",
		},
		{
			args: []string{"server", "--event-burst", "0"},
			want: "graphcd: --event-burst: must be at least 1, got 0\n",
		},
		{
			args: []string{"controller", "--app-resync", "-1s"},
			want: "graphcd: --app-resync: must not be negative, got -1s\n",
		},
		{
			args: []string{"controller", "--metrics-listen", "localhost"},
			want: "graphcd: --metrics-listen: invalid listen address \"localhost\": missing port in address\n",
		},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.env, tt.args...)
			if diff := cmp.Diff([]any{code, stderr}, []any{command.ExitUsage, tt.want}); diff != "" {
				t.Errorf("graphcd %s (-got +want):\n%s", strings.Join(tt.args, " "), diff)
			}
		})
	}
}

// Lease timings are not checked when leader election is off (the default
// of `graphcd server`): the run gets as far as the Kubernetes connection.
func TestServerIgnoresLeaseFlagsWithoutLeaderElection(t *testing.T) {
	code, _, stderr := runCLI(t, nil, "server", "--leader-elect-lease-duration", "1s", "--kubeconfig", "/nonexistent")
	want := "graphcd: kubeconfig /nonexistent (from --kubeconfig): file does not exist\n"
	if diff := cmp.Diff([]any{code, stderr}, []any{command.ExitError, want}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}
