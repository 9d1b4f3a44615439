package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// reportApps prints a line whenever an Application's source type, sync
// status, health or operation phase changes, until ctx ends, so the terminal
// shows the apps reconcile, sync and turn healthy.
func reportApps(ctx context.Context, c client.Client) {
	seen := map[string]string{}
	for {
		var apps v1alpha1.ApplicationList
		if err := c.List(ctx, &apps, client.InNamespace(namespace)); err == nil {
			for i := range apps.Items {
				app := &apps.Items[i]
				line := appLine(app)
				if app.Status.Sync.Status == "" || seen[app.Name] == line {
					continue // not compared yet, or nothing new
				}
				seen[app.Name] = line
				fmt.Printf("demo: app %-16s %s\n", app.Name, line)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
	}
}

// appLine summarizes an Application's status in one line.
func appLine(app *v1alpha1.Application) string {
	st := app.Status
	line := fmt.Sprintf("%-10s sync=%-10s health=%-12s", orDash(string(st.SourceType)), st.Sync.Status, orDash(string(st.Health.Status)))
	if op := st.OperationState; op != nil {
		line += " operation=" + string(op.Phase)
		if op.Phase == v1alpha1.OperationFailed || op.Phase == v1alpha1.OperationError {
			line += ": " + op.Message
		}
	}
	return strings.TrimSpace(line)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
