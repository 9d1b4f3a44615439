package controller

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/diff"
)

// FieldManager is the server-side apply field manager graphcd uses. The
// dry runs of server-side diff use it too, so that fields graphcd applied
// and Git no longer declares show up as removals.
const FieldManager = "graphcd"

// maxLiveRereads bounds how often one server-side diff reads a live
// object again because its dry run met a newer version.
const maxLiveRereads = 3

// prediction is a cached dry-run result: valid while the desired object,
// the live object's version and the user the dry run acted as are
// unchanged.
type prediction struct {
	desired [sha256.Size]byte
	liveRV  string
	as      string
	obj     *unstructured.Unstructured
}

// dryRun is how an app's server-side diff asks the API server: runner
// acts as the user as ("" for graphcd itself; see syncAccount).
type dryRun struct {
	as     string
	runner dryRunner
}

// serverSideDiff reports whether app asks for server-side diff: its
// compare-options annotation wins over the controller.diff.server.side
// setting.
func serverSideDiff(app *v1alpha1.Application, global bool) bool {
	if o := diff.ParseCompareOptions(app.Annotations[diff.CompareOptionsAnnotation]); o.ServerSideDiff != nil {
		return *o.ServerSideDiff
	}
	return global
}

// predict returns, for every desired object that exists live and uses
// server-side diff (the app's choice, or the object's own compare
// options), the object a server-side apply would leave: the dry run's
// answer, asked through dry. Answers are reused from prev while the
// desired object, the live version and the user are the same, so a
// periodic refresh of an unchanged app costs no API call.
func (r *Reconciler) predict(ctx context.Context, lv LiveState, dry dryRun, appSSD bool, desired []*unstructured.Unstructured, live map[ResourceKey]*unstructured.Unstructured, prev map[ResourceKey]prediction) (map[ResourceKey]prediction, error) {
	out := map[ResourceKey]prediction{}
	for _, d := range desired {
		key := KeyOf(d)
		l := live[key]
		if l == nil {
			continue // a missing object is missing whatever the strategy
		}
		on := appSSD
		if o := diff.Compare(d); o.ServerSideDiff != nil {
			on = *o.ServerSideDiff
		}
		if !on {
			continue
		}
		raw, err := json.Marshal(d.Object)
		if err != nil {
			return nil, fmt.Errorf("server-side diff of %s: %w", describe(key), err)
		}
		sum := sha256.Sum256(raw)
		if p, ok := prev[key]; ok && p.desired == sum && p.liveRV == l.GetResourceVersion() && p.as == dry.as {
			out[key] = p
			continue
		}
		obj, err := dry.runner.DryRunApply(ctx, d, FieldManager)
		// A dry run that met another version than l (a controller wrote
		// to the object meanwhile) is compared with that version: read
		// it, and dry-run again. While the object's controller is busy
		// (a Deployment's writes its status, then its revision) it can
		// change again between the read and the dry run, so this goes on
		// until both agree, a bounded number of times.
		for try := 0; err == nil && obj.GetResourceVersion() != l.GetResourceVersion() && try < maxLiveRereads; try++ {
			if l, err = lv.Fetch(ctx, key); err != nil {
				break
			}
			live[key] = l
			obj, err = dry.runner.DryRunApply(ctx, d, FieldManager)
		}
		if err != nil {
			return nil, fmt.Errorf("server-side diff of %s: %w", describe(key), err)
		}
		out[key] = prediction{desired: sum, liveRV: l.GetResourceVersion(), as: dry.as, obj: obj}
	}
	return out, nil
}
