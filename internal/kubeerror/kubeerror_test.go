package kubeerror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

const secret = "hunter2-s3cr3t"

func TestRedactStatus(t *testing.T) {
	secrets := schema.GroupKind{Kind: "Secret"}
	tests := []struct {
		name string
		in   *apierrors.StatusError
		want string
	}{{
		name: "invalid value",
		in: apierrors.NewInvalid(secrets, "db", field.ErrorList{
			field.Invalid(field.NewPath("data"), map[string]any{"password": secret}, "must be a map of base64 strings"),
			field.Required(field.NewPath("type"), "must be set"),
		}),
		want: `Secret "db" is invalid: [data: Invalid value (value not shown), type: Required value: must be set]`,
	}, {
		name: "immutable",
		in: apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "batch", field.ErrorList{
			field.Invalid(field.NewPath("spec", "template"), map[string]any{"env": secret + ": field is immutable"}, "field is immutable"),
		}),
		want: `Job.batch "batch" is invalid: spec.template: Invalid value (value not shown): field is immutable`,
	}, {
		name: "unsupported value",
		in:   apierrors.NewInvalid(secrets, "db", field.ErrorList{field.NotSupported(field.NewPath("type"), secret, []string{"Opaque"})}),
		want: `Secret "db" is invalid: type: Unsupported value (value not shown)`,
	}, {
		name: "bad request quoting a value",
		in:   apierrors.NewBadRequest(`the patch is invalid: data.password: Invalid value: "` + secret + `"`),
		want: `the patch is invalid: data.password: Invalid value (value not shown)`,
	}, {
		name: "invalid without causes keeps its message",
		in: &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Reason: metav1.StatusReasonInvalid, Code: 422,
			Message: "the server rejected our request due to an error in our request",
		}},
		want: "the server rejected our request due to an error in our request",
	}, {
		name: "not found keeps its message",
		in:   apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "db"),
		want: `secrets "db" not found`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redactStatus(tt.in.ErrStatus)
			if got.Message != tt.want {
				t.Errorf("message\n got %s\nwant %s", got.Message, tt.want)
			}
			raw, _ := json.Marshal(got)
			if strings.Contains(string(raw), secret) {
				t.Errorf("the redacted status still holds the value: %s", raw)
			}
			if got.Reason != tt.in.ErrStatus.Reason || got.Code != tt.in.ErrStatus.Code {
				t.Errorf("reason %s code %d, want %s %d", got.Reason, got.Code, tt.in.ErrStatus.Reason, tt.in.ErrStatus.Code)
			}
		})
	}
}

// TestWrap checks what a client built from a wrapped configuration sees
// of an error answer: the predicates hold, the value is gone.
func TestWrap(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Secret"}, "db", field.ErrorList{
		field.Invalid(field.NewPath("data"), map[string]any{"password": secret}, "bad"),
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/html") {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("<html>" + secret + "</html>"))
			return
		}
		w.WriteHeader(http.StatusUnprocessableEntity)
		_ = json.NewEncoder(w).Encode(invalid.ErrStatus)
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	Wrap(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	secrets := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace("ns")
	_, err := secrets.Patch(context.Background(), "db", "application/merge-patch+json", []byte(`{}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || strings.Contains(err.Error(), secret) {
		t.Errorf("patch: IsInvalid %v, error %q", apierrors.IsInvalid(err), err)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || strings.Contains(fmt.Sprint(status.Status()), secret) {
		t.Errorf("the status still holds the value: %v", status)
	}
	_, err = secrets.Get(context.Background(), "html", metav1.GetOptions{})
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("an answer that is no Status: %v", err)
	}
}
