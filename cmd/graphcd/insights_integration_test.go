//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth/session"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/insights"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// The real server and controller through a scripted delivery: commit 1
// deployed, commit 2 whose sync fails (a ConfigMap the API server
// refuses), commit 3 that fixes it. Query.insights then counts two
// deploys, one of them failed, one failure restored, three syncs and two
// lead times, each between its commit and now; a caller who may get no
// app of the installation sees none of it.
func TestInsightsAfterRealSyncs(t *testing.T) {
	s := startAuthServer(t, "--controller=true")
	policy, _ := json.Marshal(map[string]any{"data": map[string]string{"policy.csv": "g, admins, role:admin\np, role:team, applications, get, team-proj/*, allow\ng, team, role:team\n"}})
	if _, err := cluster.Client.CoreV1().ConfigMaps(s.namespace).Patch(t.Context(), "graphcd-rbac-cm", types.MergePatchType, policy, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	key, err := s.signingKey(t)
	if err != nil {
		t.Fatal(err)
	}
	issuer := session.NewIssuer(session.StaticKeys{Current: key}, session.Options{})
	sso := func(user string, groups ...string) string {
		token, _, err := issuer.Issue(t.Context(), session.Template{Subject: user + "-id", Email: user + "@example.com", Groups: groups, Kind: session.KindSSO})
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	admin, member := sso("root", "admins"), sso("alice", "team")
	ask := func(token, q string, out any) (code string) {
		t.Helper()
		status, body := s.gql(t, http.DefaultClient, token, q)
		var resp struct {
			Data   json.RawMessage
			Errors []struct{ Extensions struct{ Code string } }
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatalf("HTTP %d %s", status, body)
		}
		if len(resp.Errors) > 0 {
			return resp.Errors[0].Extensions.Code
		}
		if out != nil {
			if err := json.Unmarshal(resp.Data, out); err != nil {
				t.Fatalf("%v: %s", err, resp.Data)
			}
		}
		return ""
	}

	start := time.Now()
	good := func(mode string) map[string]string {
		return map[string]string{"app/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: " + mode + "\n"}
	}
	dir, sha1 := reposervertest.CommitFiles(t, good("one"))
	url, bare := serveGitBare(t, dir)
	push := func(files map[string]string) string {
		t.Helper()
		sha := reposervertest.CommitMore(t, dir, files)
		if out, err := exec.CommandContext(t.Context(), "git", "-C", dir, "push", "-q", bare, "main").CombinedOutput(); err != nil {
			t.Fatalf("git push: %v\n%s", err, out)
		}
		return sha
	}
	kube := kubeClient(t)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: "shop"}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: url, Path: "app", TargetRevision: "main"},
		Destination: v1alpha1.ApplicationDestination{Name: controller.InClusterName, Namespace: cluster.Namespace(t)},
	}}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}

	type opState struct {
		Phase      string
		FinishedAt string
		SyncResult *struct{ Revision string }
	}
	var st struct {
		Application struct {
			Status struct {
				Sync           struct{ Status, Revision string }
				Health         struct{ Status string }
				OperationState *opState
			}
		}
	}
	// syncTo waits for the app to compare with commit sha (the head of
	// main), syncs it and waits for the sync to end in one of phases, and
	// the app to be in sync status want ("" for any).
	const status = `{ application(name: "shop") { status { sync { status revision } health { status } operationState { phase finishedAt syncResult { revision } } } } }`
	syncTo := func(sha, want string, phases ...string) {
		t.Helper()
		poll(t, "the comparison with "+sha[:8], func() (bool, string) {
			if code := ask(admin, `mutation { refreshApplication(input: {application: {name: "shop"}}) { name } }`, nil); code != "" {
				return false, code
			}
			if code := ask(admin, status, &st); code != "" {
				return false, code
			}
			return st.Application.Status.Sync.Revision == sha, fmt.Sprintf("%+v", st.Application.Status)
		})
		if code := ask(admin, `mutation { syncApplication(input: {application: {name: "shop"}}) { name } }`, nil); code != "" {
			t.Fatalf("sync %s: %s", sha, code)
		}
		poll(t, "the sync of "+sha[:8], func() (bool, string) {
			if code := ask(admin, status, &st); code != "" {
				return false, code
			}
			op := st.Application.Status.OperationState
			out := fmt.Sprintf("%+v %+v", st.Application.Status, op)
			if op == nil || op.FinishedAt == "" || op.SyncResult == nil || op.SyncResult.Revision != sha {
				return false, out
			}
			return strings.Contains(strings.Join(phases, " "), op.Phase) &&
				(want == "" || st.Application.Status.Sync.Status == want && st.Application.Status.Health.Status == "Healthy"), out
		})
	}
	syncTo(sha1, "Synced", "Succeeded")
	sha2 := push(map[string]string{"app/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: 2\n"})
	syncTo(sha2, "", "Failed", "Error")
	sha3 := push(good("three"))
	syncTo(sha3, "Synced", "Succeeded")

	type figures struct {
		Deploys, FailedDeploys, LeadTimes, Failures, Restores, Syncs int
		ChangeFailureRate                                            float64
		LeadTimeMedianSeconds, LeadTimeP90Seconds                    int64
		TimeToRestoreMedianSeconds, SyncDurationMedianSeconds        int64
	}
	var got struct {
		Insights struct {
			Applications int
			Total        figures
			Series       []figures
		}
	}
	from, to := start.Add(-24*time.Hour).UTC().Format(time.RFC3339), time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339)
	query := func(scope, name string) string {
		return fmt.Sprintf(`{ insights(scope: %s, name: %q, from: %q, to: %q) { applications total { deploys failedDeploys leadTimes failures restores syncs changeFailureRate
  leadTimeMedianSeconds leadTimeP90Seconds timeToRestoreMedianSeconds syncDurationMedianSeconds } series { deploys } } }`, scope, name, from, to)
	}
	// The recorder writes the log as it sees the status; the API's index
	// follows the log.
	logName := insights.ConfigMapName(insights.Key{Namespace: s.namespace, Name: "shop"})
	t.Cleanup(func() {
		if t.Failed() {
			cm, err := cluster.Client.CoreV1().ConfigMaps(s.namespace).Get(context.Background(), logName, metav1.GetOptions{})
			if err == nil {
				t.Logf("the log:\n%s", cm.Data[insights.DataKey])
			}
		}
	})
	poll(t, "the insights of the three syncs", func() (bool, string) {
		if code := ask(admin, query("APPLICATION", "shop"), &got); code != "" {
			return false, code
		}
		tot := got.Insights.Total
		return tot.Syncs == 3 && tot.Restores == 1, fmt.Sprintf("%+v", got.Insights)
	})
	elapsed := int64(time.Since(start).Seconds()) + 1
	tot := got.Insights.Total
	if tot.Deploys != 2 || tot.FailedDeploys != 1 || tot.ChangeFailureRate != 0.5 || tot.Failures != 1 || tot.LeadTimes != 2 {
		t.Errorf("figures %+v: want 2 deploys, 1 failed (rate 0.5), 1 failure, 2 lead times", tot)
	}
	if tot.LeadTimeMedianSeconds < 0 || tot.LeadTimeMedianSeconds > tot.LeadTimeP90Seconds || tot.LeadTimeP90Seconds > elapsed {
		t.Errorf("lead times: median %d, p90 %d; want 0 <= median <= p90 <= %d s (the test's duration)", tot.LeadTimeMedianSeconds, tot.LeadTimeP90Seconds, elapsed)
	}
	if tot.TimeToRestoreMedianSeconds < 0 || tot.TimeToRestoreMedianSeconds > elapsed || tot.SyncDurationMedianSeconds > elapsed {
		t.Errorf("time to restore %d s, sync duration %d s: want within the test's %d s", tot.TimeToRestoreMedianSeconds, tot.SyncDurationMedianSeconds, elapsed)
	}
	sum := 0
	for _, f := range got.Insights.Series {
		sum += f.Deploys
	}
	if got.Insights.Applications != 1 || sum != tot.Deploys {
		t.Errorf("%d apps, series deploys add up to %d: want 1 and %d", got.Insights.Applications, sum, tot.Deploys)
	}

	// The project's and the installation's figures hold the app's for
	// the admin; alice may get no app of project default.
	for _, scope := range []string{"PROJECT", "INSTALLATION"} {
		if code := ask(admin, query(scope, "default"), &got); code != "" || got.Insights.Total.Deploys < 2 {
			t.Errorf("%s for the admin: %s %+v", scope, code, got.Insights)
		}
		if code := ask(member, query(scope, "default"), &got); code != "" || got.Insights.Applications != 0 || got.Insights.Total.Deploys != 0 {
			t.Errorf("%s for alice: %s %+v, want no app", scope, code, got.Insights)
		}
	}
	if code := ask(member, query("APPLICATION", "shop"), nil); code != "NOT_FOUND" {
		t.Errorf("the app's insights for alice: %q, want NOT_FOUND", code)
	}
	if code := ask(admin, strings.Replace(query("INSTALLATION", ""), from, start.Add(-200*24*time.Hour).UTC().Format(time.RFC3339), 1), nil); code != "BAD_USER_INPUT" {
		t.Errorf("a 200-day range: %q, want BAD_USER_INPUT", code)
	}

	// The log is a ConfigMap of graphcd's namespace, so a restart loses
	// nothing.
	cm, err := cluster.Client.CoreV1().ConfigMaps(s.namespace).Get(t.Context(), logName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, recs, err := insights.Parse(cm); err != nil || len(recs) < 5 {
		t.Errorf("the log: %d records, %v", len(recs), err)
	}
}
