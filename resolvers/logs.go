package resolvers

import (
	"bufio"
	"context"
	"errors"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/catalog"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/graph/model"
)

// LogReader opens Pod log streams on destination clusters
// (catalog.PodLogs implements it).
type LogReader interface {
	Stream(ctx context.Context, dest v1alpha1.ApplicationDestination, namespace, pod string, o catalog.LogOptions) (io.ReadCloser, error)
}

// Limits of a log read.
const (
	maxTailLines = 10_000
	// maxLogBytes bounds one podLogs answer.
	maxLogBytes = 4 << 20
	// maxLogLine cuts longer lines.
	maxLogLine = 64 << 10
)

// logRequest is a checked podLogs request.
type logRequest struct {
	namespace, pod string
	opts           catalog.LogOptions
}

// checkLogs authorizes reading the logs of pod for app and checks that
// the pod is a live object of the app's resource tree.
func (r *Resolver) checkLogs(ctx context.Context, app *model.Application, namespace, pod string, container *string, tail int32, since *int32, minTail int32) (logRequest, error) {
	var req logRequest
	if _, err := r.appFor(ctx, rbac.ResourceLogs, rbac.ActionGet, keyOf(app.Application)); err != nil {
		return req, err
	}
	if tail < minTail || tail > maxTailLines {
		return req, Errorf(CodeBadUserInput, "tailLines must be between %d and %d, got %d", minTail, maxTailLines, tail)
	}
	if since != nil && *since <= 0 {
		return req, Errorf(CodeBadUserInput, "sinceSeconds must be positive, got %d", *since)
	}
	if r.Logs == nil {
		return req, Errorf(CodeInternal, "pod logs are not available on this server")
	}
	st, err := r.appState(ctx, app)
	if err != nil {
		return req, err
	}
	if !podInTree(st, namespace, pod) {
		return req, Errorf(CodeNotFound, "pod %s/%s is not part of application %s", namespace, pod, app.Name)
	}
	t := int64(tail)
	req = logRequest{namespace: namespace, pod: pod, opts: catalog.LogOptions{TailLines: &t, LimitBytes: maxLogBytes}}
	if container != nil {
		req.opts.Container = *container
	}
	if since != nil {
		s := int64(*since)
		req.opts.SinceSeconds = &s
	}
	return req, nil
}

// podLogs reads the last lines of a pod's log.
func (r *Resolver) podLogs(ctx context.Context, app *model.Application, namespace, pod string, container *string, tail int32, since *int32) ([]string, error) {
	req, err := r.checkLogs(ctx, app, namespace, pod, container, tail, since, 1)
	if err != nil {
		return nil, err
	}
	rc, err := r.Logs.Stream(ctx, app.Spec.Destination, req.namespace, req.pod, req.opts)
	if err != nil {
		return nil, logError(err)
	}
	defer func() { _ = rc.Close() }()
	lines := []string{}
	scan := newLineScanner(rc)
	for scan.Scan() {
		lines = append(lines, scan.Text())
	}
	return lines, nil
}

// followLogs streams a pod's log line by line until ctx ends or the
// stream does.
func (r *Resolver) followLogs(ctx context.Context, app *model.Application, namespace, pod string, container *string, tail int32, since *int32) (<-chan string, error) {
	req, err := r.checkLogs(ctx, app, namespace, pod, container, tail, since, 0)
	if err != nil {
		return nil, err
	}
	release, err := acquireSubscription(ctx)
	if err != nil {
		return nil, err
	}
	req.opts.Follow, req.opts.LimitBytes = true, 0
	rc, err := r.Logs.Stream(ctx, app.Spec.Destination, req.namespace, req.pod, req.opts)
	if err != nil {
		release()
		return nil, logError(err)
	}
	out := make(chan string)
	go func() {
		defer close(out)
		defer release()
		defer func() { _ = rc.Close() }()
		scan := newLineScanner(rc)
		for scan.Scan() {
			select {
			case out <- scan.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

func newLineScanner(r io.Reader) *bufio.Scanner {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 4096), maxLogLine)
	return s
}

// logError tells the client why logs cannot be read. A pod or container
// that is gone or wrong is its business; any other answer of the
// destination cluster (a kubelet that does not answer, graphcd's account
// lacking the right) is a server-side failure whose Kubernetes message is
// still worth reading. Errors that never reached a cluster stay internal.
func logError(err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return &Error{Code: CodeNotFound, Message: statusMessage(err), Err: err}
	case apierrors.IsBadRequest(err):
		return &Error{Code: CodeBadUserInput, Message: statusMessage(err), Err: err}
	}
	if _, ok := errors.AsType[*apierrors.StatusError](err); ok {
		return &Error{Code: CodeInternal, Message: "the cluster cannot serve the log: " + statusMessage(err), Err: err}
	}
	return err
}
