package chatops

import (
	"context"
	"time"
)

// holdChecks are the waits before each look at whether a sync that just
// started is held for approval. The controller announces a start before
// it holds the sync, in its next pass moments later, so the bot looks a
// few times, then gives up; an application whose syncs need no approval
// is looked at once.
var holdChecks = []time.Duration{0, 250 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second}

// maxFollowers bounds the starts followed at once; a burst beyond it
// (a mass sync) is not announced rather than queue behind itself.
const maxFollowers = 16

// followHold looks, in the background, whether the sync e started is
// held for approval, and posts who may approve it when it is.
func (b *bot) followHold(ctx context.Context, e event) {
	select {
	case b.followers <- struct{}{}:
	default:
		b.log.Warn("too many syncs starting at once; not looking for approvals they need", "app", e.Name)
		return
	}
	b.following.Add(1)
	go func() {
		defer b.following.Done()
		defer func() { <-b.followers }()
		h, err := b.awaitHold(ctx, e.Name, e.Namespace)
		if err != nil {
			b.log.Error("read the sync approval", "app", e.Name, "err", err)
			return
		}
		if h == nil {
			return
		}
		if err := b.post(ctx, heldText(e, h)); err != nil {
			b.log.Error("post to the chat", "app", e.Name, "err", err)
		}
	}()
}

// awaitHold returns the sync the application holds for approval, once it
// does, or nil when its syncs need no approval or none got held in time.
func (b *bot) awaitHold(ctx context.Context, name, namespace string) (*heldOperation, error) {
	for _, wait := range holdChecks {
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(wait):
		}
		h, policy, err := b.heldSync(ctx, name, namespace)
		if err != nil || h != nil || !policy {
			return h, err
		}
	}
	return nil, nil
}
