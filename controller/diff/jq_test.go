package diff_test

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/diff"
)

// jqPair is a Deployment whose live copy differs from Git in the places
// mutating webhooks and controllers typically touch.
func jqPair() (desired, live *unstructured.Unstructured) {
	container := func(name, image string, env ...any) map[string]any {
		c := map[string]any{"name": name, "image": image}
		if len(env) > 0 {
			c["env"] = env
		}
		return c
	}
	obj := func(replicas int64, team, checksum string, annotations map[string]any, inits, containers []any) *unstructured.Unstructured {
		spec := map[string]any{"containers": containers}
		if inits != nil {
			spec["initContainers"] = inits
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{
				"name": "api", "namespace": "prod",
				"labels":      map[string]any{"team": team},
				"annotations": map[string]any{"checksum/config": checksum},
			},
			"spec": map[string]any{
				"replicas": replicas,
				"template": map[string]any{"metadata": map[string]any{"annotations": annotations}, "spec": spec},
			},
		}}
	}
	env := map[string]any{"name": "MODE", "value": "prod"}
	desired = obj(2, "a", "sha256:1", map[string]any{"kubectl.kubernetes.io/restartedAt": "2025-01-01T00:00:00Z"},
		[]any{container("injected-init-container", "init:1")},
		[]any{
			container("api", "api:1", env, map[string]any{"name": "POD_IP", "value": "unset"}),
			container("istio-proxy", "proxy:1"),
		})
	live = obj(5, "b", "sha256:2", map[string]any{"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"},
		[]any{container("injected-init-container", "init:2")},
		[]any{
			container("api", "api:1", env, map[string]any{"name": "POD_IP", "value": "10.0.0.1"}),
			container("istio-proxy", "proxy:2"),
		})
	return desired, live
}

// Path expressions of the kinds Argo CD's diffing documentation shows
// keep working under the checks: each hides one difference, and only all
// of them together make the pair equal.
func TestJQPathExpressionsArgoStyle(t *testing.T) {
	exprs := []string{
		`.spec.template.spec.initContainers[] | select(.name == "injected-init-container")`,
		`.spec.template.spec.containers[] | select(.name | test("^ISTIO-(proxy|init)$"; "i")) | .image`,
		`.spec.template.metadata.annotations | select(has("kubectl.kubernetes.io/restartedAt")) | ."kubectl.kubernetes.io/restartedAt"`,
		`.spec.replicas | select(. * 2 + 1 > 0)`,
		`.metadata | getpath(["labels", "team"]) | select(. != null)`,
		`.spec.template.spec.containers[].env[]? | select(.name | IN("POD_IP", "NODE_NAME"))`,
		`.metadata.annotations["checksum/config"] | select(startswith("sha256:") and (contains("sha") or false))`,
	}
	desired, live := jqPair()
	for i := range exprs {
		others := append(append([]string{}, exprs[:i]...), exprs[i+1:]...)
		d := newDiffer(t, diff.Options{Ignore: []diff.IgnoreRule{{Group: "apps", Kind: "Deployment", JQPathExpressions: others}}})
		res, err := d.Diff(t.Context(), desired, live)
		if err != nil {
			t.Fatalf("Diff without %q: %v", exprs[i], err)
		}
		if !res.Modified {
			t.Errorf("without %q the pair is equal: the expression selects nothing", exprs[i])
		}
	}
	d := newDiffer(t, diff.Options{Ignore: []diff.IgnoreRule{{Group: "apps", Kind: "Deployment", JQPathExpressions: exprs}}})
	res, err := d.Diff(t.Context(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if res.Modified {
		t.Errorf("with every expression the pair still differs:\n%s", res.Unified())
	}
}

// Expressions whose single steps could outlast the deadline or fill the
// memory are refused when the rules are compiled, with an error that
// names the expression and the construct.
func TestJQRefusesUnboundedConstructs(t *testing.T) {
	tests := []struct{ expr, want string }{
		// Issue 19: ran 67 s (and 12 minutes with a larger count) before
		// reporting "timed out after 1s".
		{`"x" * 2e5 | [splits("")] | empty`, "the operator * on a string is not allowed"},
		{`"x" * 1e7 | [splits("")] | empty`, "the operator * on a string is not allowed"},
		{`.metadata.name | [splits("")] | empty`, "array construction"},
		{`.metadata.name | splits("") | empty`, "the function splits/1 is not allowed"},
		{`[limit(infinite; repeat(1))]`, "array construction"},
		{`limit(infinite; repeat(1))`, "the function infinite/0 is not allowed"},
		{`def f: f; f`, "function definitions (def) are not allowed"},
		{`range(1e9) | empty`, "the function range/1 is not allowed"},
		{`reduce range(40) as $i ("x"; . + .) | empty`, "reduce is not allowed"},
		{`. as $x | $x | tojson | empty`, "the function tojson/0 is not allowed"},
		{`"\(.)" | empty`, "string interpolation is not allowed"},
		{`@base64 | empty`, "formats (@base64) are not allowed"},
		{`.a = 1`, "the operator = is not allowed"},
		{`$ENV.HOME`, "$ENV is not allowed"},
		{`.metadata.name | select(test(.))`, "test with a pattern other than a string literal"},
		{`.metadata.name | select(test("[a-z]{300}"))`, "more than 300 instructions"},
		{`.x | select(contains(.y))`, "contains with an argument other than a string literal"},
		{"." + strings.Repeat(" | .", 1000), "longer than 2048 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.expr[:min(len(tt.expr), 40)], func(t *testing.T) {
			_, err := diff.New(diff.Options{Ignore: []diff.IgnoreRule{{Kind: "*", JQPathExpressions: []string{tt.expr}}}})
			if !errors.Is(err, diff.ErrJQRefused) {
				t.Fatalf("New error = %v, want ErrJQRefused", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

// An allowed expression whose steps are each cheap but whose number of
// steps is huge (eight nested walks of the object) is stopped by the
// deadline inside evaluation: Diff returns ErrJQTimeout, and returning
// means the evaluation stopped, since it runs on Diff's goroutine.
func TestJQTimeout(t *testing.T) {
	desired, live := loadPair(t, "hpa-replicas")
	nested := func(n int) string {
		return strings.Repeat(".. as $v | ", n) + "empty"
	}
	for _, expr := range []string{nested(8), nested(40)} {
		t.Run(expr[:20], func(t *testing.T) {
			d := newDiffer(t, diff.Options{Ignore: []diff.IgnoreRule{{Kind: "*", Group: "*", JQPathExpressions: []string{expr}}}})
			done := make(chan error, 1)
			go func() {
				_, err := d.Diff(t.Context(), desired, live)
				done <- err
			}()
			err := <-done
			if !errors.Is(err, diff.ErrJQTimeout) {
				t.Fatalf("Diff error = %v, want ErrJQTimeout", err)
			}
			if !strings.Contains(err.Error(), "timed out after 1s") {
				t.Errorf("error %q does not give the deadline", err)
			}
			if _, err := d.ApplyIgnored(desired, live); !errors.Is(err, diff.ErrJQTimeout) {
				t.Errorf("ApplyIgnored error = %v, want ErrJQTimeout", err)
			}
		})
	}
}

// Arithmetic on anything but numbers is refused while evaluating, so the
// expression selects nothing instead of building a string.
func TestJQArithmeticOnNumbersOnly(t *testing.T) {
	desired, live := jqPair()
	d := newDiffer(t, diff.Options{Ignore: []diff.IgnoreRule{{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{
		`.spec.replicas | select(. - 1 >= 1 and . % 2 >= 0 and . / 1 > 0 and 1e30 * 1e30 > 0)`,
		`.metadata.labels.team | select(. * 100000000 | length > 0)`,
	}}}})
	res, err := d.Diff(t.Context(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Unified(), "team") {
		t.Errorf("string repetition selected metadata.labels.team; diff:\n%s", res.Unified())
	}
	if strings.Contains(res.Unified(), "replicas") {
		t.Errorf("numeric arithmetic did not select spec.replicas; diff:\n%s", res.Unified())
	}
}
