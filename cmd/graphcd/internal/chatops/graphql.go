package chatops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxResponse caps what the bot reads from graphcd or the chat.
const maxResponse = 1 << 20

// graphqlError is one entry of a GraphQL response's errors. Code is
// graphcd's extensions.code: NOT_FOUND, FORBIDDEN, CONFLICT ...
type graphqlError struct {
	Message    string `json:"message"`
	Extensions struct {
		Code string `json:"code"`
	} `json:"extensions"`
}

// apiError is a request graphcd answered with errors; its messages are
// meant for users, so the bot shows them in the chat.
type apiError []graphqlError

func (e apiError) Error() string {
	msgs := make([]string, len(e))
	for i, g := range e {
		msgs[i] = g.Message
		if g.Extensions.Code != "" {
			msgs[i] += " (" + g.Extensions.Code + ")"
		}
	}
	return strings.Join(msgs, "; ")
}

// graphql posts query with vars to graphcd's /api/graphql with the bearer
// token and decodes the data into out.
func (b *bot) graphql(ctx context.Context, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.server.JoinPath("api", "graphql").String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := b.api.Do(req)
	if err != nil {
		return fmt.Errorf("reach graphcd: %w", withoutURL(err))
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return fmt.Errorf("read graphcd's answer: %w", err)
	}
	var res struct {
		Data   json.RawMessage `json:"data"`
		Errors apiError        `json:"errors"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("graphcd answered HTTP %d, not GraphQL", resp.StatusCode)
	}
	if len(res.Errors) > 0 {
		return res.Errors
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("graphcd answered HTTP %d", resp.StatusCode)
	}
	return json.Unmarshal(res.Data, out)
}

// syncMutation asks for a sync to the app's target revision.
const syncMutation = `mutation($app: ApplicationRef!) {
  syncApplication(input: {application: $app}) { name namespace }
}`

// syncApp requests a sync of the application name in namespace (the
// server's own when empty).
func (b *bot) syncApp(ctx context.Context, name, namespace string) error {
	var out struct {
		SyncApplication struct{ Name, Namespace string }
	}
	return b.graphql(ctx, syncMutation, map[string]any{"app": appRef(name, namespace)}, &out)
}

// approveMutation approves the sync an application holds, on behalf of
// the chat user's graphcd identity, and reads how many approvals the sync
// now has.
const approveMutation = `mutation($app: ApplicationRef!, $by: ApproverInput) {
  approveSync(input: {application: $app, onBehalfOf: $by}) {
    name namespace syncApproval { operation { approvalsNeeded approvals { user } } }
  }
}`

// approveSync approves the held sync of the application name in
// namespace as id and returns how many more approvals the sync waits
// for. graphcd checks that the bot may approve on others' behalf, and
// that id may approve this sync.
func (b *bot) approveSync(ctx context.Context, name, namespace string, id Identity) (missing int, err error) {
	by := map[string]any{"user": id.User, "groups": id.Groups}
	if id.Groups == nil {
		by["groups"] = []string{}
	}
	var out struct {
		ApproveSync struct {
			SyncApproval struct {
				Operation *struct {
					ApprovalsNeeded int
					Approvals       []struct{ User string }
				}
			}
		}
	}
	if err := b.graphql(ctx, approveMutation, map[string]any{"app": appRef(name, namespace), "by": by}, &out); err != nil {
		return 0, err
	}
	if op := out.ApproveSync.SyncApproval.Operation; op != nil {
		missing = max(op.ApprovalsNeeded-len(op.Approvals), 0)
	}
	return missing, nil
}

// heldQuery reads the sync an application holds for approval.
const heldQuery = `query($name: String!, $namespace: String) {
  application(name: $name, namespace: $namespace) {
    syncApproval { policy { approvals } held operation { id initiatedBy approvalsNeeded groups expiresAt } }
  }
}`

// heldOperation is a sync waiting for approval.
type heldOperation struct {
	ID              string    `json:"id"`
	InitiatedBy     string    `json:"initiatedBy"`
	ApprovalsNeeded int       `json:"approvalsNeeded"`
	Groups          []string  `json:"groups"`
	ExpiresAt       time.Time `json:"expiresAt"`
}

// heldSync returns the sync the application name in namespace waits to
// have approved, or nil when it holds none (or is gone), and whether its
// syncs need approval at all.
func (b *bot) heldSync(ctx context.Context, name, namespace string) (_ *heldOperation, policy bool, _ error) {
	vars := map[string]any{"name": name}
	if namespace != "" {
		vars["namespace"] = namespace
	}
	var out struct {
		Application *struct {
			SyncApproval struct {
				Policy    *struct{}      `json:"policy"`
				Held      bool           `json:"held"`
				Operation *heldOperation `json:"operation"`
			} `json:"syncApproval"`
		} `json:"application"`
	}
	if err := b.graphql(ctx, heldQuery, vars, &out); err != nil {
		return nil, false, err
	}
	app := out.Application
	if app == nil {
		return nil, false, nil
	}
	if !app.SyncApproval.Held {
		return nil, app.SyncApproval.Policy != nil, nil
	}
	return app.SyncApproval.Operation, true, nil
}

// appRef is an ApplicationRef; without namespace graphcd means its own.
func appRef(name, namespace string) map[string]any {
	ref := map[string]any{"name": name}
	if namespace != "" {
		ref["namespace"] = namespace
	}
	return ref
}

// withoutURL drops the URL from a net/http client error: a webhook or
// response URL carries a secret, and the log must not show it.
func withoutURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
