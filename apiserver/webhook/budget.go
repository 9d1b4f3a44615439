package webhook

import (
	"errors"
	"io"
	"net/http"
	"sync"
)

// byteBudget bounds the body bytes all requests hold at once. It never
// waits: a request that does not fit is refused, so a flood costs at most
// the budget and queues nothing.
type byteBudget struct {
	mu   sync.Mutex
	size int64
	used int64
}

// take reserves n bytes and reports whether they were free.
func (b *byteBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.size-b.used {
		return false
	}
	b.used += n
	return true
}

// give returns n bytes taken before.
func (b *byteBudget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
}

// inUse returns the bytes taken now.
func (b *byteBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Errors of readBody, which the handler answers 503, 413 and 400.
var (
	errBudget   = errors.New("too many webhook bytes in flight")
	errTooLarge = errors.New("body too large")
)

// minBodyStep is the first buffer of a body without Content-Length.
const minBodyStep = 64 << 10

// readBody reads r's body, at most limit bytes, into one buffer whose
// every byte is taken from the budget before it is allocated: a body with
// Content-Length is read into a buffer of that size; one without (chunked)
// into a buffer that doubles, each larger buffer taken before the smaller
// one is given back. The caller calls release once done with the body.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, release func(), err error) {
	var held int64
	release = func() {
		h.budget.give(held)
		held = 0
	}
	rd := http.MaxBytesReader(w, r.Body, limit)
	if r.ContentLength >= 0 {
		if !h.budget.take(r.ContentLength) {
			return nil, release, errBudget
		}
		held = r.ContentLength
		body = make([]byte, r.ContentLength)
		if _, err := io.ReadFull(rd, body); err != nil {
			return nil, release, err
		}
		return body, release, nil
	}
	for {
		if len(body) == cap(body) {
			next := min(max(2*int64(cap(body)), minBodyStep), limit+1)
			if !h.budget.take(next) {
				return nil, release, errBudget
			}
			grown := make([]byte, len(body), next)
			copy(grown, body)
			h.budget.give(held)
			body, held = grown, next
		}
		n, err := rd.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if errors.Is(err, io.EOF) {
			return body, release, nil
		}
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, release, errTooLarge
		}
		if err != nil {
			return nil, release, err
		}
	}
}
