package client

import (
	"context"

	"github.com/Khan/genqlient/graphql"
)

// FollowPodLogs subscribes to the log of a Pod of an application: the
// last tailLines lines, then each new line as the container writes it,
// one line a result.
func (c *Client) FollowPodLogs(ctx context.Context, app ApplicationRef, namespace, pod string, container *string, tailLines int) (*Subscription[FollowPodLogsResponse], error) {
	return Subscribe[FollowPodLogsResponse](ctx, c, &graphql.Request{
		OpName: "FollowPodLogs",
		Query:  FollowPodLogs_Operation,
		Variables: map[string]any{"application": app, "namespace": namespace, "pod": pod,
			"container": container, "tailLines": tailLines},
	})
}

// WatchAudit subscribes to new audit entries that filter selects.
func (c *Client) WatchAudit(ctx context.Context, filter *AuditFilter) (*Subscription[WatchAuditResponse], error) {
	return Subscribe[WatchAuditResponse](ctx, c, &graphql.Request{
		OpName:    "WatchAudit",
		Query:     WatchAudit_Operation,
		Variables: map[string]any{"filter": filter},
	})
}
