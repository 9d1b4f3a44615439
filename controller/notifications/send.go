package notifications

import (
	"context"
	"errors"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
)

// ErrSendTimeout is a send that did not end in time.
var ErrSendTimeout = errors.New("the send did not finish in time")

// SendWithin sends n to dest through svc within timeout, holding one of
// slots (a channel whose capacity is how many sends may run at once)
// while it runs. The engine's Send takes no context: a send that
// outlives the timeout keeps its slot until it returns, so slots also
// bound the sends left behind.
func SendWithin(ctx context.Context, slots chan struct{}, timeout time.Duration, svc services.NotificationService,
	n services.Notification, dest services.Destination) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return ErrSendTimeout
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-slots }()
		done <- svc.Send(n, dest)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ErrSendTimeout
	}
}
