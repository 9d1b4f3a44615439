package resolvers

import (
	"context"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/insights"
)

// InsightsIndex answers delivery insights queries (an *insights.Index
// implements it).
type InsightsIndex interface {
	Run(q insights.Query) (*insights.Result, error)
}

// insights answers Query.insights: the scope's apps the caller may get,
// added up by the index.
func (r *Resolver) insights(ctx context.Context, scope model.InsightsScope, name, namespace *string, from, to time.Time, bucket model.InsightsBucket) (*model.Insights, error) {
	if r.Insights == nil {
		return nil, Errorf(CodeNotFound, "this server keeps no delivery insights")
	}
	if r.Authz != nil && !r.Authz.Authenticated(ctx) {
		return nil, Errorf(CodeUnauthenticated, "log in first")
	}
	q := insights.Query{From: from, To: to, Bucket: insights.Day}
	if bucket == model.InsightsBucketWeek {
		q.Bucket = insights.Week
	}
	out := &model.Insights{Scope: scope}
	may := func(a insights.App) bool {
		return r.served(a.Namespace) && r.can(ctx, rbac.ResourceApplications, rbac.ActionGet,
			r.policyObject(rbac.ResourceApplications, audit.Object{Project: a.Project, Namespace: a.Namespace, Name: a.Name}))
	}
	switch scope {
	case model.InsightsScopeApplication, model.InsightsScopeProject:
		if name == nil || *name == "" {
			return nil, Errorf(CodeBadUserInput, "scope %s needs a name", scope)
		}
		out.Name = *name
	}
	switch scope {
	case model.InsightsScopeApplication:
		key := types.NamespacedName{Namespace: r.Namespace, Name: *name}
		if namespace != nil && *namespace != "" {
			key.Namespace = *namespace
		}
		if _, err := r.appFor(ctx, rbac.ResourceApplications, rbac.ActionGet, key); err != nil {
			return nil, err
		}
		q.Match = func(a insights.App) bool { return a.Namespace == key.Namespace && a.Name == key.Name }
	case model.InsightsScopeProject:
		q.Match = func(a insights.App) bool { return a.Project == *name && may(a) }
	default:
		q.Match = may
	}
	res, err := r.Insights.Run(q)
	if err != nil {
		return nil, Errorf(CodeBadUserInput, "%v", err)
	}
	out.Applications = toInt32(res.Apps)
	out.Total = deliveryFigures(res.Total)
	out.Series = make([]*model.DeliveryFigures, len(res.Series))
	for i, f := range res.Series {
		out.Series[i] = deliveryFigures(f)
	}
	return out, nil
}

// deliveryFigures maps f to the graph's type.
func deliveryFigures(f insights.Figures) *model.DeliveryFigures {
	return &model.DeliveryFigures{
		Start: metav1.NewTime(f.Start), Days: toInt32(f.Days),
		Deploys: toInt32(f.Deploys), DeploysPerDay: f.DeploysPerDay,
		FailedDeploys: toInt32(f.FailedDeploys), ChangeFailureRate: f.ChangeFailureRate,
		LeadTimes: toInt32(f.LeadTimes), LeadTimeMedianSeconds: toInt32(f.LeadTimeMedian), LeadTimeP90Seconds: toInt32(f.LeadTimeP90),
		Failures: toInt32(f.Failures), Restores: toInt32(f.Restores), TimeToRestoreMedianSeconds: toInt32(f.TimeToRestoreMedian),
		Syncs: toInt32(f.Syncs), SyncDurationMedianSeconds: toInt32(f.SyncDurationMedian), SyncDurationP90Seconds: toInt32(f.SyncDurationP90),
		DriftSeconds: float64(f.Drift),
	}
}

// toInt32 is v clamped to GraphQL's Int.
func toInt32[T int | int64](v T) int32 {
	return int32(min(max(v, math.MinInt32), math.MaxInt32)) //nolint:gosec // G115: clamped to int32
}
