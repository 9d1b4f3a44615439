// Package diffpeer sets graphcd's diff engine (controller/diff) beside the
// one Argo CD runs, gitops-engine's pkg/diff, on the same generated corpus
// (controller/diff/difftest), in one `go test -bench` run:
//
//	cd bench/diffpeer && go test -run . -bench . -benchmem -count 5
//
// It is a module of its own so that gitops-engine and the k8s.io/kubernetes
// replace block it needs never reach graphcd's go.mod. The benchmarks live
// in bench_test.go; TestAgreement reports how often the two engines agree
// on "modified" and why they differ where they do.
package diffpeer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	gediff "github.com/argoproj/gitops-engine/pkg/diff"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/diff"
	"github.com/graphcd/graphcd/controller/diff/difftest"
)

// NewGraphcd returns graphcd's Differ with no ignore rules, the same
// footing as the peer with its no-op normalizer.
func NewGraphcd() (*diff.Differ, error) {
	d, err := diff.New(diff.Options{})
	if err != nil {
		return nil, fmt.Errorf("new graphcd differ: %w", err)
	}
	return d, nil
}

// PeerOptions are the gitops-engine options Argo CD's application
// controller passes for an application with no ignoreDifferences and
// default settings: a normalizer that changes nothing, aggregated roles
// compared, client-side (three-way, last-applied) diff. The logger is
// discarded so that no benchmark pays for log output.
func PeerOptions() []gediff.Option {
	return []gediff.Option{
		gediff.WithNormalizer(gediff.GetNoopNormalizer()),
		gediff.IgnoreAggregatedRoles(false),
		gediff.WithLogr(logr.Discard()),
	}
}

// PeerDiff runs gitops-engine's diff.Diff, turning its panics (it panics
// when an object does not marshal) into errors.
func PeerDiff(desired, live *unstructured.Unstructured, opts ...gediff.Option) (res *gediff.DiffResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("gitops-engine diff panicked: %v", r)
		}
	}()
	res, err = gediff.Diff(desired, live, opts...)
	if err != nil {
		return nil, fmt.Errorf("gitops-engine diff: %w", err)
	}
	return res, nil
}

// JSONRoundTrip marshals and unmarshals both objects of a pair: the floor
// that any engine re-encoding its inputs pays, and the yardstick of
// graphcd's "within 3x of a JSON round trip" target.
func JSONRoundTrip(p difftest.Pair) error {
	for _, obj := range []map[string]any{p.Desired.Object, p.Live.Object} {
		raw, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("marshal %s: %w", p.Name, err)
		}
		var back map[string]any
		if err := json.Unmarshal(raw, &back); err != nil {
			return fmt.Errorf("unmarshal %s: %w", p.Name, err)
		}
	}
	return nil
}

// Verdict is what both engines and the corpus say about one pair.
type Verdict struct {
	Name string
	// Want is the corpus's truth: desired was changed after the last apply.
	Want bool
	// Graphcd and Peer are the engines' Modified.
	Graphcd, Peer bool
	// Reason says, for a pair the engines disagree on, where the engine
	// that reported a change saw it. Empty when they agree.
	Reason string
}

// Report sums up a run of both engines over a corpus.
type Report struct {
	Verdicts []Verdict
	// Agree counts pairs on which both engines report the same Modified;
	// GraphcdRight and PeerRight count pairs on which each matches Want.
	Agree, GraphcdRight, PeerRight int
}

// AgreementPercent is the share of pairs the engines agree on.
func (r Report) AgreementPercent() float64 {
	if len(r.Verdicts) == 0 {
		return 0
	}
	return 100 * float64(r.Agree) / float64(len(r.Verdicts))
}

// Disagreements returns the verdicts on which the engines differ.
func (r Report) Disagreements() []Verdict {
	var out []Verdict
	for _, v := range r.Verdicts {
		if v.Graphcd != v.Peer {
			out = append(out, v)
		}
	}
	return out
}

// maxReasonPaths bounds how many differing paths one reason names.
const maxReasonPaths = 3

// Compare runs both engines over pairs. It fails on the first error of
// either engine; disagreements are data, not errors.
func Compare(ctx context.Context, d *diff.Differ, pairs []difftest.Pair) (Report, error) {
	var rep Report
	opts := PeerOptions()
	for _, p := range pairs {
		g, err := d.Diff(ctx, p.Desired, p.Live, diff.WithoutText())
		if err != nil {
			return Report{}, fmt.Errorf("graphcd on %s: %w", p.Name, err)
		}
		pr, err := PeerDiff(p.Desired, p.Live, opts...)
		if err != nil {
			return Report{}, fmt.Errorf("pair %s: %w", p.Name, err)
		}
		v := Verdict{Name: p.Name, Want: p.Modified, Graphcd: g.Modified, Peer: pr.Modified}
		if v.Graphcd != v.Peer {
			v.Reason, err = reason(p, g, pr)
			if err != nil {
				return Report{}, fmt.Errorf("explain %s: %w", p.Name, err)
			}
		} else {
			rep.Agree++
		}
		if v.Graphcd == v.Want {
			rep.GraphcdRight++
		}
		if v.Peer == v.Want {
			rep.PeerRight++
		}
		rep.Verdicts = append(rep.Verdicts, v)
	}
	return rep, nil
}

// reason names the paths at which the engine that reported a change saw
// it. Values are shown except for Secrets, whose data must not be logged.
func reason(p difftest.Pair, g *diff.Result, pr *gediff.DiffResult) (string, error) {
	showValues := p.Desired.GetKind() != "Secret"
	var who string
	var desired, live any
	if pr.Modified {
		who = "gitops-engine"
		if err := json.Unmarshal(pr.PredictedLive, &desired); err != nil {
			return "", fmt.Errorf("decode predicted live: %w", err)
		}
		if err := json.Unmarshal(pr.NormalizedLive, &live); err != nil {
			return "", fmt.Errorf("decode normalized live: %w", err)
		}
	} else {
		who = "graphcd"
		if g.Desired == nil || g.Live == nil {
			return "", errors.New("graphcd result has no normalized objects")
		}
		// Round-trip through JSON so int64 and float64 compare alike.
		var err error
		if desired, err = viaJSON(g.Desired.Object); err != nil {
			return "", err
		}
		if live, err = viaJSON(g.Live.Object); err != nil {
			return "", err
		}
	}
	var paths []string
	diffPaths(live, desired, "", showValues, &paths)
	sort.Strings(paths)
	more := ""
	if len(paths) > maxReasonPaths {
		more = fmt.Sprintf(" (+%d more)", len(paths)-maxReasonPaths)
		paths = paths[:maxReasonPaths]
	}
	truth := "unchanged"
	if p.Modified {
		truth = "changed"
	}
	return fmt.Sprintf("only %s reports a change (corpus: %s) at %s%s", who, truth, strings.Join(paths, ", "), more), nil
}

func viaJSON(obj map[string]any) (any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode normalized object: %w", err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decode normalized object: %w", err)
	}
	return out, nil
}

// diffPaths appends the JSON pointers at which a (live) and b (predicted)
// differ, with "live -> predicted" values when showValues.
func diffPaths(a, b any, path string, showValues bool, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			diffPaths(am[k], bm[k], path+"/"+escapePointer(k), showValues, out)
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			diffPaths(al[i], bl[i], path+"/"+strconv.Itoa(i), showValues, out)
		}
		return
	}
	if reflect.DeepEqual(a, b) {
		return
	}
	if path == "" {
		path = "/"
	}
	if showValues {
		path += fmt.Sprintf(" (%s -> %s)", short(a), short(b))
	}
	*out = append(*out, path)
}

func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// short renders a value for a reason line, cut to a readable length.
func short(v any) string {
	if v == nil {
		return "absent"
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	const limit = 40
	if len(raw) > limit {
		return string(raw[:limit]) + "..."
	}
	return string(raw)
}
