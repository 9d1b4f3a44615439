package resolvers

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestLogError(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	unreachable := apierrors.NewInternalError(errors.New(`Get "https://10.0.0.7:10250/containerLogs/web/web-0/app": dial tcp 10.0.0.7:10250: connect: connection refused`))
	for _, tt := range []struct {
		name string
		err  error
		code Code   // "" for an error that stays internal and unsafe
		msg  string // the message a client reads
	}{
		{"pod gone", fmt.Errorf("logs: %w", apierrors.NewNotFound(pods, "web-0")), CodeNotFound, `pods "web-0" not found`},
		{"wrong container", apierrors.NewBadRequest(`container "db" is not valid for pod web-0`), CodeBadUserInput, `container "db" is not valid for pod web-0`},
		{"kubelet unreachable", fmt.Errorf("logs: %w", unreachable), CodeInternal, "the cluster cannot serve the log: " + unreachable.Status().Message},
		{"no right on the cluster", apierrors.NewForbidden(pods, "web-0", errors.New("no pods/log")), CodeInternal, "the cluster cannot serve the log: " + apierrors.NewForbidden(pods, "web-0", errors.New("no pods/log")).Status().Message},
		{"cluster not registered", errors.New("cluster https://c1 is not registered"), "", ""},
	} {
		got := logError(tt.err)
		safe, ok := errors.AsType[*Error](got)
		switch {
		case tt.code == "" && ok:
			t.Errorf("%s: safe error %q, want it to stay internal", tt.name, safe.Message)
		case tt.code == "":
		case !ok:
			t.Errorf("%s: %v is not safe to show, want code %s", tt.name, got, tt.code)
		case safe.Code != tt.code || safe.Message != tt.msg:
			t.Errorf("%s: %s %q, want %s %q", tt.name, safe.Code, safe.Message, tt.code, tt.msg)
		}
	}
}
