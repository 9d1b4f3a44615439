package resolvers

import (
	"context"
	"math"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/apiserver/statusview"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/memguard"
	"github.com/graphcd/graphcd/internal/statusboard"
)

// StatusReader reads the status the controllers and replicas publish,
// and probes the parts the API reaches (statusview.View implements it).
type StatusReader interface {
	// Cluster returns the state published for the cluster at server;
	// false when none was.
	Cluster(ctx context.Context, server string) (statusboard.Cluster, bool, error)
	// Report returns the status of graphcd's components.
	Report(ctx context.Context) (*statusview.Report, error)
}

// clusterInfo resolves Cluster.info; the cluster reached the caller
// through a list that checked `clusters, get`.
func (r *Resolver) clusterInfo(ctx context.Context, c *model.Cluster) (*model.ClusterInfo, error) {
	if r.Status == nil {
		return nil, nil
	}
	st, ok, err := r.Status.Cluster(ctx, c.Server)
	if err != nil || !ok {
		return nil, err
	}
	status := model.ClusterConnectionStatusUnknown
	switch st.Status {
	case statusboard.Successful:
		status = model.ClusterConnectionStatusSuccessful
	case statusboard.Failed:
		status = model.ClusterConnectionStatusFailed
	}
	return &model.ClusterInfo{
		ServerVersion: st.ServerVersion,
		ConnectionState: &model.ClusterConnectionState{
			Status: status, Message: st.Message, AttemptedAt: optionalTime(st.AttemptedAt),
		},
		CacheInfo: &model.ClusterCacheInfo{
			ResourcesCount: count32(st.Resources), ApisCount: count32(st.APIs), LastCacheSyncTime: optionalTime(st.LastSync),
		},
		ApplicationsCount: count32(st.Apps), Shard: count32(st.Shard),
	}, nil
}

// componentStatus resolves Query.componentStatus, for admins.
func (r *Resolver) componentStatus(ctx context.Context) (*model.ComponentStatus, error) {
	if err := r.authorize(ctx, rbac.ResourceClusters, rbac.ActionUpdate, audit.Object{Name: "*"}); err != nil {
		return nil, err
	}
	out := &model.ComponentStatus{APIReplicas: []*model.ComponentReplica{}, Controllers: []*model.ControllerReplica{}}
	if r.Status == nil {
		out.RepoServer = &model.ComponentProbe{Name: "unknown", Message: "this server reports no status"}
		return out, nil
	}
	rep, err := r.Status.Report(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range rep.Components {
		switch c.Kind {
		case statusboard.KindAPI:
			out.APIReplicas = append(out.APIReplicas, &model.ComponentReplica{
				ID: c.ID, Version: c.Version, StartedAt: optionalTime(c.Started), LastSeen: metav1.NewTime(c.Seen),
				Memory: memoryStatus(c.Memory),
			})
		case statusboard.KindController:
			clusters := c.Clusters
			if clusters == nil {
				clusters = []string{}
			}
			out.Controllers = append(out.Controllers, &model.ControllerReplica{
				ID: c.ID, Version: c.Version, Shard: count32(c.Shard), Leader: c.Leader, Clusters: clusters,
				StartedAt: optionalTime(c.Started), LastSeen: metav1.NewTime(c.Seen), Memory: memoryStatus(c.Memory),
			})
		}
	}
	out.RepoServer = probe(rep.RepoServer)
	if rep.Dex != nil {
		out.Dex = probe(*rep.Dex)
	}
	if rd := rep.Redis; rd != nil {
		p := probe(rd.Probe)
		out.Redis = &model.RedisStatus{
			Address: p.Name, Reachable: p.Reachable, Message: p.Message, Version: rd.Version,
			UsedMemoryBytes: float64(rd.UsedMemory), MaxMemoryBytes: float64(rd.MaxMemory),
		}
	}
	return out, nil
}

func memoryStatus(m memguard.State) *model.MemoryStatus {
	return &model.MemoryStatus{
		LimitBytes: float64(m.Limit), LiveHeapBytes: float64(m.Live), Pressure: m.Pressure,
		PressureSince: optionalTime(m.Since), Waits: float64(m.Waits),
	}
}

// probe maps a probe; its error names an address at most, never a
// credential (statusview reaches the parts with clients that hold them).
func probe(p statusview.Probe) *model.ComponentProbe {
	out := &model.ComponentProbe{Name: p.Name, Reachable: p.Err == nil}
	if p.Err != nil {
		out.Message = truncate(strings.TrimSpace(p.Err.Error()), 1024)
	}
	return out
}

// count32 is n as a GraphQL Int, clamped to its range.
func count32(n int) int32 {
	return int32(min(max(n, 0), math.MaxInt32)) //nolint:gosec // G115: clamped to int32
}

func optionalTime(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	mt := metav1.NewTime(t)
	return &mt
}
