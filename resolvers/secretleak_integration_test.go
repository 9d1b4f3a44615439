//go:build integration

package resolvers_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/appstate"
)

// TestSecretNeverInPatchErrors patches a Secret of an application into
// shapes the API server refuses: the refusal reaches the client, the
// Secret's values never do (the API server echoes refused values).
func TestSecretNeverInPatchErrors(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	const value = "hunter2-never-shown"
	encoded := base64.StdEncoding.EncodeToString([]byte(value))
	immutable := true
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, StringData: map[string]string{"password": value}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "frozen"}, StringData: map[string]string{"password": value}, Immutable: &immutable},
	} {
		if _, err := cluster.Client.CoreV1().Secrets(ns).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	key := types.NamespacedName{Namespace: ns, Name: "holder"}
	if err := states.Put(t.Context(), appstate.State{App: key, ReconciledAt: time.Now(), Managed: []appstate.ManagedResource{
		{Version: "v1", Kind: "Secret", Namespace: ns, Name: "db", Status: v1alpha1.SyncStatusCodeSynced},
		{Version: "v1", Kind: "Secret", Namespace: ns, Name: "frozen", Status: v1alpha1.SyncStatusCodeSynced},
	}}); err != nil {
		t.Fatal(err)
	}
	createApps(t, ns, appSpec{name: "holder"})
	waitCount(t, ns, 1)
	const patch = `mutation($in: ApplicationResourceInput!, $p: String!, $t: PatchType!) { patchApplicationResource(input: $in, patch: $p, patchType: $t) }`
	for _, tt := range []struct{ name, secret, patchType, patch string }{
		{"type changed", "db", "MERGE", `{"type": "kubernetes.io/tls"}`},
		{"data not a map", "db", "JSON", `[{"op": "replace", "path": "/data", "value": "` + encoded + `"}]`},
		{"failed test operation", "db", "JSON", `[{"op": "test", "path": "/data/password", "value": "d3Jvbmc="}]`},
		{"bad key", "db", "MERGE", `{"data": {"bad key!": "` + encoded + `"}}`},
		{"immutable data", "frozen", "STRATEGIC", `{"data": {"password": "d3Jvbmc="}}`},
		{"immutable flag", "frozen", "MERGE", `{"immutable": false}`},
		{"bad label", "db", "MERGE", `{"metadata": {"labels": {"leak": "` + value + `!"}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := map[string]any{"application": map[string]any{"name": "holder", "namespace": ns}, "kind": "Secret", "namespace": ns, "name": tt.secret}
			_, resp := query(t, patch, map[string]any{"in": in, "p": tt.patch, "t": tt.patchType})
			if len(resp.Errors) == 0 {
				t.Fatal("the patch was accepted")
			}
			msg := resp.Errors[0].Message
			t.Logf("%s: %s", resp.Errors[0].Extensions["code"], msg)
			if code := resp.Errors[0].Extensions["code"]; code != "BAD_USER_INPUT" {
				t.Errorf("code %v, want BAD_USER_INPUT", code)
			}
			if tt.name != "bad label" && (strings.Contains(msg, value) || strings.Contains(msg, encoded)) {
				t.Errorf("the error holds the Secret's value: %s", msg)
			}
			if strings.Contains(msg, value+"!") {
				t.Errorf("the error echoes the refused label value: %s", msg)
			}
		})
	}
	got, err := cluster.Client.CoreV1().Secrets(ns).Get(t.Context(), "db", metav1.GetOptions{})
	if err != nil || string(got.Data["password"]) != value || got.Type != corev1.SecretTypeOpaque {
		t.Errorf("the Secret changed: %v %v", got, err)
	}
}
