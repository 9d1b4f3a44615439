package audit

import (
	"context"
	"log/slog"
	"time"
)

// recordTimeout bounds the writes of one entry (store and Event).
const recordTimeout = 5 * time.Second

// Log records entries: in its Store and, when Events is set, as
// Kubernetes Events. A nil *Log records nothing.
type Log struct {
	Store  Store
	Events *EventWriter
	// Logger gets the failures to record, which never fail a mutation.
	Logger *slog.Logger
}

// Record stores e (setting its ID) and writes its Event. It does so even
// when the request has been cancelled, since the mutation happened.
func (l *Log) Record(ctx context.Context, e *Entry) {
	if l == nil || l.Store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := l.Store.Append(ctx, e); err != nil {
		l.logger().ErrorContext(ctx, "audit entry not stored", "field", e.Field, "user", e.User, "err", err)
	}
	if l.Events != nil {
		if err := l.Events.Write(ctx, e); err != nil {
			l.logger().ErrorContext(ctx, "audit event not written", "field", e.Field, "user", e.User, "err", err)
		}
	}
}

func (l *Log) logger() *slog.Logger {
	if l.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Logger
}
