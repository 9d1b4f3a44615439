package resolvers

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/graph/model"
)

// errUnwritten is the answer of the notification operations whose
// implementation is still to come on this branch.
var errUnwritten = Errorf(CodeInternal, "not implemented yet")

func (r *Resolver) notificationSubscriptions(context.Context, *model.Application) ([]*model.NotificationSubscription, error) {
	return nil, errUnwritten
}

func (r *Resolver) testNotification(context.Context, model.TestNotificationInput) ([]*model.TestNotificationResult, error) {
	return nil, errUnwritten
}

func (r *Resolver) subscribeNotification(context.Context, model.SubscribeNotificationInput) (*model.Application, error) {
	return nil, errUnwritten
}

func (r *Resolver) unsubscribeNotification(context.Context, model.UnsubscribeNotificationInput) (*model.Application, error) {
	return nil, errUnwritten
}

func (r *Resolver) subscribeDeliveries(context.Context, types.NamespacedName) (<-chan *model.NotificationDelivery, error) {
	return nil, errUnwritten
}
