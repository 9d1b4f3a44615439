//go:build integration

package controller_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// chartRepo serves a Helm chart repository with chart "web" at each of
// versions: a ConfigMap whose data shows the chart's version and the
// value "mode".
func chartRepo(t *testing.T, versions ...string) string {
	t.Helper()
	var charts []*chart.Chart
	for _, v := range versions {
		charts = append(charts, reposervertest.ConfigMapChart("web", v,
			map[string]string{"chart": "{{ .Chart.Version | quote }}", "mode": "{{ .Values.mode | quote }}"}, map[string]any{"mode": "chart-default"}))
	}
	return reposervertest.ServeChartRepo(t, charts...)
}

// webData reads the data of the chart's ConfigMap in ns.
func webData(t *testing.T, ns string) map[string]string {
	t.Helper()
	cm, err := cluster.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data
}

// A chart from a chart repository with its values from a Git repository
// (spec.sources with ref: values): it syncs with both revisions in
// status and history, goes OutOfSync on a values commit and on a chart
// version bump, and rolls back to the earlier pair of revisions.
// statusYAML is the named fields of st as YAML, for the test log.
func statusYAML(t *testing.T, st v1alpha1.ApplicationStatus, fields ...string) string {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	picked := map[string]any{}
	for _, f := range fields {
		picked[f] = all[f]
	}
	out, err := yaml.Marshal(picked)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestMultiSourceChartWithGitValues(t *testing.T) {
	t.Parallel()
	const name = "multi-source"
	charts := chartRepo(t, "1.0.0", "1.1.0")
	valuesDir, values1 := reposervertest.CommitFiles(t, map[string]string{"envs/prod.yaml": "mode: blue\n"})
	dest := cluster.Namespace(t)
	sources := []v1alpha1.ApplicationSource{
		{RepoURL: charts, Chart: "web", TargetRevision: "1.0.0", Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$values/envs/prod.yaml"}}},
		{RepoURL: "file://" + valuesDir, TargetRevision: "main", Ref: "values"},
	}
	op := manual(v1alpha1.SyncOperation{})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appNamespace},
		Spec: v1alpha1.ApplicationSpec{
			Project: "default", Sources: sources,
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest},
		},
		Operation: &op,
	}
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(t.Context(), app) })

	revisions := func(want ...string) func(*v1alpha1.ApplicationStatus) bool {
		return func(s *v1alpha1.ApplicationStatus) bool { return slices.Equal(s.Sync.Revisions, want) }
	}
	got := waitStatus(t, name, "synced at both revisions", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced && revisions("1.0.0", values1)(s)
	})
	if d := webData(t, dest); d["chart"] != "1.0.0" || d["mode"] != "blue" {
		t.Errorf("ConfigMap data = %v, want chart 1.0.0 with mode blue from the values repository", d)
	}
	st := got.Status
	if st.Sync.Revision != "" || !slices.Equal(st.SourceTypes, []v1alpha1.ApplicationSourceType{v1alpha1.ApplicationSourceTypeHelm, ""}) ||
		len(st.Sync.ComparedTo.Sources) != 2 || st.Sync.ComparedTo.Source.RepoURL != "" {
		t.Errorf("status: revision %q, sourceTypes %v, comparedTo %+v; want the multi-source fields only", st.Sync.Revision, st.SourceTypes, st.Sync.ComparedTo)
	}
	if r := st.OperationState.SyncResult; !slices.Equal(r.Revisions, []string{"1.0.0", values1}) || len(r.Sources) != 2 || r.Revision != "" {
		t.Errorf("sync result: revisions %v, %d sources, revision %q", r.Revisions, len(r.Sources), r.Revision)
	}

	// A values commit: OutOfSync at the new pair; a sync deploys it.
	values2 := reposervertest.CommitMore(t, valuesDir, map[string]string{"envs/prod.yaml": "mode: green\n"})
	refresh(t, name)
	waitStatus(t, name, "OutOfSync at the new values commit", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && revisions("1.0.0", values2)(s)
	})
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	got = waitStatus(t, name, "synced at the new values commit", func(s *v1alpha1.ApplicationStatus) bool {
		return len(s.History) == 2 && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	if d := webData(t, dest); d["mode"] != "green" {
		t.Errorf("after the values commit: ConfigMap data = %v, want mode green", d)
	}
	t.Logf("status after the values commit's sync:\n%s", statusYAML(t, got.Status, "sync", "sourceTypes", "history"))
	first, second := got.Status.History[0], got.Status.History[1]
	if !slices.Equal(first.Revisions, []string{"1.0.0", values1}) || !slices.Equal(second.Revisions, []string{"1.0.0", values2}) || len(first.Sources) != 2 {
		t.Errorf("history: %+v, %+v; want each sync's pair of revisions and the sources", first, second)
	}

	// A rollback to the first entry deploys its pair again.
	requestSync(t, name, manual(v1alpha1.SyncOperation{Sources: first.Sources, Revisions: first.Revisions}))
	waitStatus(t, name, "rolled back", func(s *v1alpha1.ApplicationStatus) bool {
		return len(s.History) == 3 && slices.Equal(s.History[2].Revisions, first.Revisions)
	})
	if d := webData(t, dest); d["mode"] != "blue" {
		t.Errorf("after the rollback: ConfigMap data = %v, want mode blue again", d)
	}

	// A chart version bump in the spec: OutOfSync at the new chart.
	app = getApp(t, name)
	app.Spec.Sources[0].TargetRevision = "1.1.0"
	if err := apps.Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, name, "OutOfSync at chart 1.1.0", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && revisions("1.1.0", values2)(s)
	})
}

// Value files that leave their source, name a ref no source has, or refs
// that cannot be told apart, and value file URLs of a scheme
// helm.valuesFileSchemes leaves out or at a metadata address, are refused with a clear condition, and
// nothing is rendered.
func TestMultiSourceRefusals(t *testing.T) {
	t.Parallel()
	charts := chartRepo(t, "1.0.0")
	valuesDir, _ := reposervertest.CommitFiles(t, map[string]string{"envs/prod.yaml": "mode: blue\n"})
	for _, tc := range []struct {
		name      string
		valueFile string
		ref2      string
		want      string
	}{
		{"multi-source-escape", "$values/../../../etc/passwd", "", "outside the repository"},
		{"multi-source-unknown-ref", "$other/envs/prod.yaml", "", `no source of the application has ref "other"`},
		{"multi-source-duplicate-ref", "$values/envs/prod.yaml", "values", `ref "values" names more than one source`},
		{"multi-source-bad-ref", "$values/envs/prod.yaml", "a/b", `ref "a/b" may hold only`},
		{"values-url-scheme", "file:///etc/passwd", "", `URL scheme not allowed: "file" (allowed: http, https)`},
		{"values-url-metadata", "http://169.254.169.254/latest/meta-data/iam/", "", "is link-local"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sources := []v1alpha1.ApplicationSource{
				{RepoURL: charts, Chart: "web", TargetRevision: "1.0.0", Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{tc.valueFile}}},
				{RepoURL: "file://" + valuesDir, TargetRevision: "main", Ref: "values"},
			}
			if tc.ref2 != "" {
				sources = append(sources, v1alpha1.ApplicationSource{RepoURL: "file://" + valuesDir, TargetRevision: "main", Ref: tc.ref2})
			}
			app := &v1alpha1.Application{
				ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: appNamespace},
				Spec: v1alpha1.ApplicationSpec{
					Project: "default", Sources: sources,
					Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: cluster.Namespace(t)},
				},
			}
			if err := apps.Create(t.Context(), app); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = apps.Delete(t.Context(), app) })
			waitStatus(t, tc.name, fmt.Sprintf("refused with %q", tc.want), func(s *v1alpha1.ApplicationStatus) bool {
				for _, c := range s.Conditions {
					if strings.Contains(c.Message, tc.want) && (c.Type == v1alpha1.ApplicationConditionComparisonError || c.Type == v1alpha1.ApplicationConditionInvalidSpecError) {
						t.Logf("%s: %s", c.Type, c.Message)
						return true
					}
				}
				return false
			})
		})
	}
}
