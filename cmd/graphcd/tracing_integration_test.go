//go:build integration

package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth/session"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/testenv/otlpsink"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// One trace from a sync mutation to the Kubernetes requests: the server
// (API and controller) and a separate repo-server send OTLP to the
// OpenTelemetry Collector's receiver; the test's traceparent starts the
// trace, the mutation's span continues it, the controller's reconciles
// and sync join it through the Application's traceparent annotation, the
// render crosses the gRPC hop into the repo-server, and the sync's
// Kubernetes requests hang under the sync. The server's JSON log lines of
// the request carry its trace and request ids.
func TestTraceFromMutationToKubernetes(t *testing.T) {
	sink, err := otlpsink.Start(t.Context(), otlpsink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sink.Close(t.Context()) })
	otlp := []string{"--otlp-address", sink.Addr, "--otlp-insecure", "--log-format", "json"}

	repoAddr, caFile := startTracedRepoServer(t, otlp)
	s := startAuthServer(t, append([]string{"--controller=true", "--log-level", "debug",
		"--repo-server-addr", repoAddr, "--repo-server-ca-file", caFile}, otlp...)...)

	kube := kubeClient(t)
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: "team-proj"}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Name: "*", Namespace: "*"}},
	}}
	if err := kube.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"app/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: traced\n",
	})
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: "traced"}, Spec: v1alpha1.ApplicationSpec{
		Project:     "team-proj",
		Source:      &v1alpha1.ApplicationSource{RepoURL: serveGit(t, dir), Path: "app", TargetRevision: "main"},
		Destination: v1alpha1.ApplicationDestination{Name: controller.InClusterName, Namespace: cluster.Namespace(t)},
	}}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	key, err := s.signingKey(t)
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := session.NewIssuer(session.StaticKeys{Current: key}, session.Options{}).
		Issue(t.Context(), session.Template{Subject: "alice-id", Email: ssoEmail, Groups: []string{"team"}, Kind: session.KindSSO})
	if err != nil {
		t.Fatal(err)
	}

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	post := func(q, operation, traceparent string) string {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"query": q, "operationName": operation})
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+"/api/graphql", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		if traceparent != "" {
			req.Header.Set("Traceparent", traceparent)
		}
		_, out := do(t, http.DefaultClient, req)
		return out
	}
	const state = `query State { application(name: "traced") { status { sync { status } operationState { phase } } } }`
	poll(t, "the app compared", func() (bool, string) {
		out := post(state, "State", "")
		return strings.Contains(out, `"OutOfSync"`), out
	})
	out := post(`mutation Deploy { syncApplication(input: {application: {name: "traced"}}) { name } }`, "Deploy",
		"00-"+traceID+"-00f067aa0ba902b7-01")
	if strings.Contains(out, `"errors"`) {
		t.Fatalf("sync: %s", out)
	}
	poll(t, "the sync to succeed", func() (bool, string) {
		out := post(state, "State", "")
		return strings.Contains(out, `"Succeeded"`) && strings.Contains(out, `"Synced"`), out
	})

	// The spans arrive in batches: wait for every part of the trace.
	var spans []otlpsink.Span
	var mutation, sync, render, kubeReq *otlpsink.Span
	poll(t, "the trace's spans", func() (bool, string) {
		spans = nil
		for _, sp := range sink.Spans() {
			if sp.TraceID == traceID {
				spans = append(spans, sp)
			}
		}
		mutation, sync, render, kubeReq = nil, nil, nil, nil
		for i := range spans {
			sp := &spans[i]
			switch {
			case sp.Name == "mutation Deploy" && sp.Service == "graphcd-server":
				mutation = sp
			case sp.Name == "sync" && sp.Service == "graphcd-server":
				sync = sp
			case sp.Name == "render" && sp.Service == "graphcd-repo-server":
				render = sp
			}
		}
		if sync != nil {
			for i := range spans {
				if strings.HasPrefix(spans[i].Name, "kubernetes ") && descends(spans, spans[i], sync.SpanID) {
					kubeReq = &spans[i]
				}
			}
		}
		return mutation != nil && sync != nil && render != nil && kubeReq != nil, otlpsink.Tree(spans)
	})
	t.Logf("the trace of the sync mutation (%d spans):\n%s", len(spans), otlpsink.Tree(spans))

	if mutation.ParentID != "00f067aa0ba902b7" {
		t.Errorf("the mutation's parent is %q, want the caller's span", mutation.ParentID)
	}
	if mutation.Attributes["graphql.operation.name"] != "Deploy" || mutation.Attributes["graphql.operation.type"] != "mutation" {
		t.Errorf("the mutation's attributes: %v", mutation.Attributes)
	}
	if !descends(spans, *sync, mutation.SpanID) || sync.Attributes["graphcd.app.name"] != "traced" {
		t.Errorf("the sync span %+v does not descend from the mutation", sync)
	}
	if !descends(spans, *render, mutation.SpanID) || render.Attributes["graphcd.source.path"] != "app" {
		t.Errorf("the render span %+v does not descend from the mutation", render)
	}
	// The render's parent is the gRPC server span, whose parent is the
	// server's gRPC client span: the trace crossed the hop.
	if p := parentOf(spans, *render); p == nil || p.Service != "graphcd-repo-server" || parentOf(spans, *p) == nil || parentOf(spans, *p).Service != "graphcd-server" {
		t.Errorf("the render's parents do not cross the gRPC hop:\n%s", otlpsink.Tree(spans))
	}

	// The JSON log line of the mutation's HTTP request names its trace and
	// request.
	found := false
	for line := range strings.SplitSeq(s.logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "http request" || rec["trace_id"] != traceID {
			continue
		}
		if id, _ := rec["request_id"].(string); id != "" {
			found = true
		}
	}
	if !found {
		t.Errorf("no JSON \"http request\" log line with trace_id %s and a request_id", traceID)
	}
}

// startTracedRepoServer starts `graphcd repo-server` over TLS with args
// and returns its address and the CA file that verifies it.
func startTracedRepoServer(t *testing.T, args []string) (addr, caFile string) {
	t.Helper()
	bin := buildBinary(t)
	dir := t.TempDir()
	certFile, keyFile := repoServerCert(t, dir)
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr = "127.0.0.1:" + strconv.Itoa(port)
	repo := exec.CommandContext(t.Context(), bin, append([]string{"repo-server", "--listen", addr, "--tls-cert", certFile, "--tls-key", keyFile}, args...)...)
	repo.Env = binaryEnv()
	logs := &syncBuffer{}
	repo.Stdout, repo.Stderr = logs, logs
	if err := repo.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = repo.Process.Kill()
		_ = repo.Wait()
		if t.Failed() {
			t.Logf("graphcd repo-server's log:\n%s", logs)
		}
	})
	return addr, certFile
}

// parentOf returns the parent of sp among spans, or nil.
func parentOf(spans []otlpsink.Span, sp otlpsink.Span) *otlpsink.Span {
	for i := range spans {
		if spans[i].SpanID == sp.ParentID {
			return &spans[i]
		}
	}
	return nil
}

// descends reports whether ancestor is sp's parent, or its parent's, and
// so on up the spans received.
func descends(spans []otlpsink.Span, sp otlpsink.Span, ancestor string) bool {
	for p := parentOf(spans, sp); p != nil; p = parentOf(spans, *p) {
		if p.SpanID == ancestor {
			return true
		}
	}
	return false
}
