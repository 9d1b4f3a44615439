package resolvers

import (
	"context"
	"sync"
	"time"

	"github.com/vikstrous/dataloadgen"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/appstate"
)

// EventReader reads the Kubernetes Events about Applications, a namespace
// at a time (catalog.Events implements it).
type EventReader interface {
	ApplicationEvents(ctx context.Context, namespace string) ([]eventsv1.Event, error)
}

// loaderWait is how long a loader gathers keys before fetching: the
// fields of one page resolve within it.
const loaderWait = time.Millisecond

// loaders batch the reads behind list → detail edges of one response, so
// that a page of N apps costs one read per kind of detail, not N. They are
// made on first use: most responses (a subscription's events above all,
// one per subscriber and event) read neither.
type loaders struct {
	r *Resolver

	eventsOnce sync.Once
	// appEvents fetches, per namespace, the events of every app there.
	appEvents *dataloadgen.Loader[string, []eventsv1.Event]

	statesOnce sync.Once
	// states fetches the controller's last state of apps, a page at a
	// time.
	states *dataloadgen.Loader[types.NamespacedName, *appstate.State]
}

type loadersKey struct{}

// WithLoaders returns ctx with fresh loaders. The server calls it for
// every query and mutation, so that nothing is cached from one response
// to the next. A subscription's context has none: its loaders would
// outlive an event. Each event of the application subscription carries
// loaders of its own instead (model.Application.Loaders).
func (r *Resolver) WithLoaders(ctx context.Context) context.Context {
	return context.WithValue(ctx, loadersKey{}, &loaders{r: r})
}

func (l *loaders) events() *dataloadgen.Loader[string, []eventsv1.Event] {
	l.eventsOnce.Do(func() {
		l.appEvents = dataloadgen.NewLoader(func(ctx context.Context, namespaces []string) ([][]eventsv1.Event, []error) {
			out, errs := make([][]eventsv1.Event, len(namespaces)), make([]error, len(namespaces))
			for i, ns := range namespaces {
				out[i], errs[i] = l.r.KubeEvents.ApplicationEvents(ctx, ns)
			}
			return out, errs
		}, dataloadgen.WithWait(loaderWait))
	})
	return l.appEvents
}

func (l *loaders) appStates() *dataloadgen.Loader[types.NamespacedName, *appstate.State] {
	l.statesOnce.Do(func() {
		l.states = dataloadgen.NewLoader(func(ctx context.Context, apps []types.NamespacedName) ([]*appstate.State, []error) {
			states, err := l.r.States.GetMany(ctx, apps)
			if err != nil {
				return nil, []error{err} // one error answers every key
			}
			return states, nil
		}, dataloadgen.WithWait(loaderWait))
	})
	return l.states
}

// loadersOf returns the loaders for the fields of app: its own (a
// subscription's event), else those of ctx, else new ones (a resolver
// called outside the server).
func (r *Resolver) loadersOf(ctx context.Context, app *model.Application) *loaders {
	if l, ok := app.Loaders.(*loaders); ok {
		return l
	}
	if l, ok := ctx.Value(loadersKey{}).(*loaders); ok {
		return l
	}
	return &loaders{r: r}
}

// applicationEvents returns the newest first events about app.
func (r *Resolver) applicationEvents(ctx context.Context, app *model.Application, first int32) ([]*model.KubeEvent, error) {
	if first < 0 || first > maxListPage {
		return nil, Errorf(CodeBadUserInput, "first must be between 0 and %d, got %d", maxListPage, first)
	}
	if r.KubeEvents == nil || first == 0 {
		return nil, nil
	}
	all, err := r.loadersOf(ctx, app).events().Load(ctx, app.Namespace)
	if err != nil {
		return nil, err
	}
	var mine []eventsv1.Event
	for _, e := range all {
		if e.Regarding.Name == app.Name && (e.Regarding.UID == "" || e.Regarding.UID == app.Application.UID) {
			mine = append(mine, e)
		}
	}
	events := model.KubeEvents(mine)
	events = events[:min(len(events), int(first))]
	out := make([]*model.KubeEvent, len(events))
	for i := range events {
		out[i] = &events[i]
	}
	return out, nil
}
