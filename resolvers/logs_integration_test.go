//go:build integration

package resolvers_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/catalog"
)

// fakeLogs serves a made-up log: "line 1" ... "line N" for the last N
// lines asked. This package's cluster has no nodes (localcluster.Minimal),
// so this fake stands in for a node's kubelet only, the API around it is
// real. The whole path, through the API server to KWOK serving a fake
// container's log, is tested by the console's TestAppPage.
type fakeLogs struct{}

func (fakeLogs) Stream(_ context.Context, _ v1alpha1.ApplicationDestination, namespace, pod string, o catalog.LogOptions) (io.ReadCloser, error) {
	var b strings.Builder
	for i := range *o.TailLines {
		fmt.Fprintf(&b, "%s/%s %s line %d\n", namespace, pod, o.Container, i+1)
	}
	return io.NopCloser(strings.NewReader(b.String())), nil
}

func TestPodLogs(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	key := types.NamespacedName{Namespace: ns, Name: "logs"}
	if err := states.Put(t.Context(), state(key, "nginx")); err != nil { // its Pod is web-5d8f-x in namespace "logs"
		t.Fatal(err)
	}
	createApps(t, ns, appSpec{name: "logs"})
	waitCount(t, ns, 1)
	const q = `query($ns: String, $pns: String!, $pod: String!, $tail: Int!) {
	  application(name: "logs", namespace: $ns) { podLogs(namespace: $pns, pod: $pod, container: "app", tailLines: $tail) } }`
	var got struct{ Application struct{ PodLogs []string } }
	data(t, q, map[string]any{"ns": ns, "pns": "logs", "pod": "web-5d8f-x", "tail": 3}, &got)
	if want := []string{"logs/web-5d8f-x app line 1", "logs/web-5d8f-x app line 2", "logs/web-5d8f-x app line 3"}; fmt.Sprint(got.Application.PodLogs) != fmt.Sprint(want) {
		t.Errorf("logs = %q, want %q", got.Application.PodLogs, want)
	}
	for _, tt := range []struct {
		name string
		vars map[string]any
		want string
	}{
		{"a pod outside the app", map[string]any{"ns": ns, "pns": "kube-system", "pod": "etcd", "tail": 3}, "NOT_FOUND"},
		{"too many lines", map[string]any{"ns": ns, "pns": "logs", "pod": "web-5d8f-x", "tail": 100_000}, "BAD_USER_INPUT"},
	} {
		if code := errorCode(t, q, tt.vars); code != tt.want {
			t.Errorf("%s: code %q, want %q", tt.name, code, tt.want)
		}
	}

	c := dialWS(t, apiURL, 0)
	c.subscribe("l", `subscription($ns: String) { podLogs(application: {name: "logs", namespace: $ns}, namespace: "logs", pod: "web-5d8f-x", tailLines: 2) }`, map[string]any{"ns": ns})
	for i := 1; i <= 2; i++ {
		var line struct{ PodLogs string }
		c.next("l", &line)
		if want := fmt.Sprintf("logs/web-5d8f-x  line %d", i); line.PodLogs != want {
			t.Errorf("line %d = %q, want %q", i, line.PodLogs, want)
		}
	}
}
