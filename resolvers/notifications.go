package resolvers

import (
	"context"
	"fmt"
	"math"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/controller/notifications"
	"github.com/graphcd/graphcd/graph/model"
)

// outcomes map the state annotation's phases to the schema's.
var outcomes = map[notifications.Phase]model.NotificationOutcome{
	notifications.PhasePending: model.NotificationOutcomePending,
	notifications.PhaseSent:    model.NotificationOutcomeSent,
	notifications.PhaseFailed:  model.NotificationOutcomeFailed,
	notifications.PhaseDead:    model.NotificationOutcomeDead,
}

// notificationDeliveries pages the deliveries the controller recorded on
// app (which the caller may see), newest first.
func (r *Resolver) notificationDeliveries(_ context.Context, app *model.Application, first int32, after *string) (*model.NotificationDeliveryConnection, error) {
	all := deliveries(app.GetAnnotations())
	// Newest first; the key breaks ties, so the order and the cursors
	// are stable.
	order := func(d model.NotificationDelivery) string {
		return fmt.Sprintf("%020d/%s/%s/%s/%s", math.MaxInt64-d.Time.UnixNano(), d.Trigger, d.Service, d.Recipient, strings.ToLower(string(d.Outcome)))
	}
	return page(all, order, first, after)
}

// deliveries are the deliveries the state annotation of an app with
// annotations records. An annotation that cannot be read records none,
// as the controller then starts it anew.
func deliveries(annotations map[string]string) []model.NotificationDelivery {
	st, _ := notifications.ParseState(annotations[notifications.StateAnnotation])
	all := make([]model.NotificationDelivery, 0, len(st))
	for key, d := range st {
		outcome, ok := outcomes[d.Phase]
		if !ok {
			continue
		}
		all = append(all, model.NotificationDelivery{
			Key: key, Trigger: d.Trigger, Service: d.Service, Recipient: d.Recipient, Outcome: outcome,
			Attempts: int32(min(max(d.Attempts, 0), math.MaxInt32)), Error: d.Error, Time: metav1.NewTime(d.Time), //nolint:gosec // G115: clamped to int32
		})
	}
	return all
}
