package terminal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/utils/exec"

	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/apiserver/catalog"
	authsession "github.com/graphcd/graphcd/auth/session"
	"github.com/graphcd/graphcd/resolvers"
)

// message is one message of the terminal protocol, either way.
type message struct {
	Operation string `json:"operation"`
	Data      string `json:"data,omitempty"`
	Rows      uint16 `json:"rows,omitempty"`
	Cols      uint16 `json:"cols,omitempty"`
}

// session is one open terminal.
type session struct {
	h      *Handler
	sock   *socket
	req    resolvers.ExecRequest
	target resolvers.ExecTarget
	shells []string
	rec    audit.TerminalSession
}

// ending is why a session ends: a close code and its reason.
type ending struct {
	code int
	why  string
}

// run runs the session until it ends, and records it.
func (s *session) run(ctx context.Context) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ended := make(chan ending, 4)
	end := func(code int, why string) {
		select {
		case ended <- ending{code, why}:
		default:
		}
		cancel(nil)
	}
	stdin, feed := io.Pipe()
	sizes := newSizeQueue()
	activity := make(chan struct{}, 1)
	go s.read(feed, sizes, activity, end)
	go s.watch(ctx, activity, end)
	execDone := make(chan struct{})
	go func() {
		defer close(execDone)
		defer func() {
			if v := recover(); v != nil {
				s.h.log.Error("terminal exec panicked", "panic", fmt.Sprint(v))
				end(CloseInternal, "internal error")
			}
		}()
		e := s.exec(ctx, stdin, sizes)
		end(e.code, e.why)
	}()
	// Every way the session ends says why first (watch does for the
	// caller's session ending). The client is told at once: taking the
	// shell down can take a while, and a client that gives up meanwhile
	// (a console leaving the page on a revoked session) would never hear
	// why.
	e := <-ended
	if e.code != websocket.CloseNormalClosure {
		_ = s.sock.send(message{Operation: "stdout", Data: "\r\n\x1b[1m" + e.why + "\x1b[0m\r\n"})
	}
	s.sock.close(e.code, e.why) // output still coming is dropped
	sizes.stop()
	_ = feed.Close()  // the shell reads the end of its input
	<-execDone        // the executor ends with ctx
	_ = stdin.Close() // and input still in flight is dropped
	if s.rec.Shell != "" {
		s.record(func(ctx context.Context) error { return s.h.opts.Events.TerminalEnded(ctx, s.rec, time.Now(), e.why) })
	}
}

// exec runs the first of the shells that starts. A shell that fails
// before writing anything did not start (it is not in the image, say),
// and the next is tried.
func (s *session) exec(ctx context.Context, stdin io.Reader, sizes *sizeQueue) ending {
	var last error
	for _, sh := range s.shells {
		out := &stdout{sock: s.sock}
		s.rec.Shell = sh
		in := &gate{r: stdin, open: make(chan struct{}), done: make(chan struct{})}
		out.onFirst = func() {
			close(in.open)
			s.record(func(ctx context.Context) error { return s.h.opts.Events.TerminalStarted(ctx, s.rec) })
		}
		err := s.h.opts.Exec.Exec(ctx, s.target.Destination, s.req.Namespace, s.req.Pod, s.req.Container, []string{sh},
			catalog.ExecStreams{Stdin: in, Stdout: out, Sizes: sizes.view(in.done)})
		close(in.done)
		out.flush()
		if ctx.Err() != nil {
			return endingOf(ctx)
		}
		if out.wrote() {
			if err != nil {
				if _, exited := errors.AsType[exec.CodeExitError](err); !exited {
					s.h.log.Warn("terminal session failed", "session", s.rec.ID, "err", err)
				}
			}
			return ending{websocket.CloseNormalClosure, "the shell exited"}
		}
		last = err
	}
	s.rec.Shell = ""
	s.h.log.Warn("no shell started", "session", s.rec.ID, "shells", s.shells, "err", last)
	why := "no shell could be started (tried " + strings.Join(s.shells, ", ") + ")"
	if st, ok := errors.AsType[*apierrors.StatusError](last); ok && st.ErrStatus.Message != "" {
		why += ": " + st.ErrStatus.Message
	}
	return ending{CloseNotFound, why}
}

// read feeds stdin and resizes from the client's messages, at most
// InputRate bytes a second on average.
func (s *session) read(stdin *io.PipeWriter, sizes *sizeQueue, activity chan<- struct{}, end func(int, string)) {
	defer func() { _ = stdin.Close() }()
	bucket := newBucket(s.h.opts.InputRate)
	for {
		var m message
		typ, r, err := s.sock.conn.NextReader()
		if err != nil {
			if errors.Is(err, websocket.ErrReadLimit) {
				end(websocket.CloseMessageTooBig, fmt.Sprintf("a message is larger than %d bytes", maxMessage))
			} else {
				end(websocket.CloseNormalClosure, "the client closed the terminal")
			}
			return
		}
		if typ != websocket.TextMessage || json.NewDecoder(r).Decode(&m) != nil {
			end(CloseBadRequest, "a message is not a JSON text message")
			return
		}
		select {
		case activity <- struct{}{}:
		default:
		}
		switch m.Operation {
		case "stdin":
			bucket.take(len(m.Data))
			if _, err := io.WriteString(stdin, m.Data); err != nil {
				return
			}
		case "resize":
			if m.Rows > 0 && m.Cols > 0 {
				sizes.push(remotecommand.TerminalSize{Width: m.Cols, Height: m.Rows})
			}
		default:
			end(CloseBadRequest, "unknown operation: want stdin or resize")
			return
		}
	}
}

// watch ends the session when the caller's session ends, when a policy
// change takes the permission away, or when no input came for
// IdleTimeout.
func (s *session) watch(ctx context.Context, activity <-chan struct{}, end func(int, string)) {
	idle := time.NewTimer(s.h.opts.IdleTimeout)
	defer idle.Stop()
	for {
		changed := s.h.opts.Authorizer.Changed()
		select {
		case <-ctx.Done():
			e := endingOf(ctx)
			end(e.code, e.why)
			return
		case <-activity:
			idle.Reset(s.h.opts.IdleTimeout)
		case <-idle.C:
			end(CloseIdle, fmt.Sprintf("no input for %s", s.h.opts.IdleTimeout))
			return
		case <-changed:
			if _, err := s.h.opts.Authorizer.ExecAllowed(ctx, s.req); err != nil {
				code, why := refusal(err)
				if code == CloseForbidden || code == CloseNotFound {
					why = "permission revoked: " + why
				}
				end(code, why)
				return
			}
		}
	}
}

// endingOf says why ctx ended: the caller's token expired or was
// revoked (see Options.Bind), or the server is stopping.
func endingOf(ctx context.Context) ending {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, authsession.ErrRevoked):
		return ending{CloseUnauthenticated, "your session ended: token revoked"}
	case errors.Is(cause, authsession.ErrExpired):
		return ending{CloseUnauthenticated, "your session ended: token expired"}
	}
	return ending{websocket.CloseGoingAway, "the server is stopping"}
}

// gate passes stdin to one shell once it has started (written its
// prompt), so that input typed meanwhile is not lost to a shell that
// fails to start; it reads end-of-file once that shell's attempt is over.
type gate struct {
	r          io.Reader
	open, done chan struct{}
}

func (g *gate) Read(p []byte) (int, error) {
	select {
	case <-g.open:
	case <-g.done:
		return 0, io.EOF
	}
	select {
	case <-g.done:
		return 0, io.EOF
	default:
	}
	return g.r.Read(p)
}

// record writes one of the session's Events, on a context of its own: the
// end is recorded after the session's context has ended.
func (s *session) record(write func(context.Context) error) {
	if s.h.opts.Events == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := write(ctx); err != nil {
		s.h.log.Error("cannot record terminal session", "session", s.rec.ID, "err", err)
	}
}

// socket is the terminal's websocket; writes are serialised.
type socket struct {
	conn         *websocket.Conn
	writeTimeout time.Duration
	mu           sync.Mutex
}

func (c *socket) send(m message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	if err := c.conn.WriteJSON(m); err != nil {
		_ = c.conn.Close() // a client that stopped reading
		return err
	}
	return nil
}

// close sends the close frame; reason is cut to what a frame carries.
func (c *socket) close(code int, reason string) {
	if len(reason) > 120 {
		reason = reason[:117] + "..."
		for !utf8.ValidString(reason) {
			reason = reason[:len(reason)-4] + "..."
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
}

// stdout sends the shell's output as stdout messages. A message carries
// whole UTF-8 characters only (JSON strings cannot hold part of one); a
// character cut between two writes waits for its end.
type stdout struct {
	sock    *socket
	onFirst func()
	mu      sync.Mutex
	n       int
	partial []byte
}

func (o *stdout) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == 0 && len(p) > 0 && o.onFirst != nil {
		o.onFirst()
	}
	o.n += len(p)
	b := append(o.partial, p...)
	cut := len(b)
	// Hold back an incomplete character at the end (at most 3 bytes).
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	o.partial = append([]byte(nil), b[cut:]...)
	if cut == 0 {
		return len(p), nil
	}
	if err := o.sock.send(message{Operation: "stdout", Data: string(b[:cut])}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush sends what is held back.
func (o *stdout) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.partial) > 0 {
		_ = o.sock.send(message{Operation: "stdout", Data: string(o.partial)})
		o.partial = nil
	}
}

func (o *stdout) wrote() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n > 0
}

// sizeQueue keeps the terminal's latest size for the shells a session
// tries: each attempt sees it from the start (see view), so a size sent
// while a shell failed to start is not lost.
type sizeQueue struct {
	mu   sync.Mutex
	last *remotecommand.TerminalSize
	// changed is closed, and replaced, at each push.
	changed chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newSizeQueue() *sizeQueue {
	return &sizeQueue{changed: make(chan struct{}), done: make(chan struct{})}
}

// push sets the latest size.
func (q *sizeQueue) push(s remotecommand.TerminalSize) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.last = &s
	close(q.changed)
	q.changed = make(chan struct{})
}

func (q *sizeQueue) stop() { q.once.Do(func() { close(q.done) }) }

// view returns the sizes of one attempt, which ends with done.
func (q *sizeQueue) view(done <-chan struct{}) remotecommand.TerminalSizeQueue {
	return &sizeView{q: q, done: done}
}

type sizeView struct {
	q    *sizeQueue
	seen *remotecommand.TerminalSize
	done <-chan struct{}
}

// Next returns a size not yet returned, or nil once the attempt or the
// session ends.
func (v *sizeView) Next() *remotecommand.TerminalSize {
	for {
		v.q.mu.Lock()
		last, changed := v.q.last, v.q.changed
		v.q.mu.Unlock()
		if last != nil && last != v.seen {
			v.seen = last
			s := *last
			return &s
		}
		select {
		case <-changed:
		case <-v.done:
			return nil
		case <-v.q.done:
			return nil
		}
	}
}

// bucket paces input: take waits until n more bytes fit in the rate.
type bucket struct {
	rate   float64 // bytes per second
	tokens float64
	last   time.Time
}

func newBucket(rate int) *bucket {
	return &bucket{rate: float64(rate), tokens: float64(rate), last: time.Now()}
}

func (b *bucket) take(n int) {
	now := time.Now()
	b.tokens = min(b.rate, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
	b.tokens -= float64(n)
	if b.tokens < 0 {
		time.Sleep(time.Duration(-b.tokens / b.rate * float64(time.Second)))
	}
}

// newID names a session.
func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
