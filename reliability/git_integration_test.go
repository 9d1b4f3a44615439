//go:build integration

package reliability

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// gitDownFor is how long the git server stays down, or the repository
// deleted.
func gitDownFor() time.Duration {
	if full() {
		return 5 * time.Minute
	}
	return 20 * time.Second
}

// The git server down (connections refused) a while, then back; the
// repository deleted (404) a while, then back; a force-push rewriting
// the history synced from. While git is unreachable a push is made and a
// refresh asked: every background app must keep its resources as last
// synced and start no sync; those that show an error condition are
// counted. Recovery: from git back
// (or the force-push) until every app synced the repository's head with
// no error condition left.
func gitFaults(t *testing.T, in *installation, l *load) []outcome {
	var out []outcome
	for _, fault := range []struct {
		name       string
		stop, back func()
	}{
		{fmt.Sprintf("git server down %v, then back", gitDownFor()), in.git.gate.down, func() {
			if err := in.git.gate.up(t.Context()); err != nil {
				t.Fatal(err)
			}
		}},
		{fmt.Sprintf("repository deleted (404) %v, then back", gitDownFor()),
			func() { in.git.gate.deleted.Store(true) }, func() { in.git.gate.deleted.Store(false) }},
	} {
		l.settle(t)
		l.pushing.Store(false)
		synced := in.git.pushed()
		fault.stop()
		started := time.Now()
		if _, err := in.push(t.Context()); err != nil {
			t.Fatal(err)
		}
		in.refreshAll(t, l.apps)
		// An app whose repository server still has the branch resolved
		// and rendered (its caches, 3 minutes) shows no error: it is
		// counted, not failed.
		conditions := map[string]string{}
		for time.Since(started) < gitDownFor() {
			for name, c := range in.checkKeptState(t, l, synced) {
				conditions[name] = c
			}
			time.Sleep(time.Second)
		}
		var condition string
		for _, c := range conditions {
			condition = c
		}
		fault.back()
		back := time.Now()
		settled := l.settle(t)
		in.checkNoErrorConditions(t, l.apps)
		out = append(out, outcome{fault: fault.name, recovery: settled.Sub(back),
			note: fmt.Sprintf("%d of %d apps showed an error condition meanwhile (%q); resources kept as last synced, no sync started",
				len(conditions), len(l.apps), condition)})
	}

	l.settle(t)
	l.pushing.Store(false)
	if _, err := in.git.rewrite(t.Context()); err != nil {
		t.Fatal(err)
	}
	pushed := time.Now()
	in.refreshAll(t, l.apps)
	settled := l.settle(t)
	in.checkNoErrorConditions(t, l.apps)
	out = append(out, outcome{fault: "force-push rewriting the synced history", recovery: settled.Sub(pushed),
		note: "measured from the push: apps synced the new head; history entries of the lost commits kept"})
	return out
}

// errorCondition returns the message of the app's first error condition,
// "" when it has none.
func errorCondition(a *v1alpha1.Application) string {
	for _, c := range a.Status.Conditions {
		if strings.HasSuffix(string(c.Type), "Error") {
			return string(c.Type) + ": " + c.Message
		}
	}
	return ""
}

// checkKeptState fails the test unless every background app still has its
// ConfigMap as change synced made it and runs no operation; it returns the
// error conditions of the apps that have one.
func (in *installation) checkKeptState(t *testing.T, l *load, synced int) map[string]string {
	t.Helper()
	conditions := map[string]string{}
	for _, name := range l.apps {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		a, err := in.app(ctx, name)
		if err == nil {
			if a.Operation != nil || (a.Status.OperationState != nil && a.Status.OperationState.FinishedAt == nil) {
				t.Errorf("%s: a sync started while git was unreachable", name)
			}
			if c := errorCondition(a); c != "" {
				conditions[name] = c
			}
		}
		cm, err := cluster.Client.CoreV1().ConfigMaps(l.dests[name]).Get(ctx, "settings", metav1.GetOptions{})
		cancel()
		if err != nil {
			t.Errorf("%s: ConfigMap settings: %v", name, err)
			continue
		}
		if got, want := cm.Data["push"], fmt.Sprint(synced); got != want {
			t.Errorf("%s: ConfigMap settings has push %q while git was unreachable, want %q, the last synced", name, got, want)
		}
	}
	return conditions
}

// checkNoErrorConditions fails the test for every app with an error
// condition left.
func (in *installation) checkNoErrorConditions(t *testing.T, apps []string) {
	t.Helper()
	for _, name := range apps {
		a, err := in.app(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		if c := errorCondition(a); c != "" {
			t.Errorf("%s: condition left after recovery: %s", name, c)
		}
	}
}
