package apiserver

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// jsonPOST is the GraphQL transport for `POST` with an application/json
// body. It differs from gqlgen's POST in one way that matters for large
// pages: it writes the executor's already-encoded data as it is, where
// gqlgen's marshals the whole response again (validating and compacting
// every byte of a page of 500 applications a second time).
type jsonPOST struct{}

var _ graphql.Transport = jsonPOST{}

// Supports accepts JSON POSTs that are not websocket upgrades.
func (jsonPOST) Supports(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("Upgrade") != "" {
		return false
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mediaType == "application/json"
}

// Do runs one operation. The body was already bounded by limitBody.
func (jsonPOST) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	w.Header().Set("Content-Type", "application/json")
	start := graphql.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeResponse(w, http.StatusBadRequest, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("cannot read request body")}))
		return
	}
	var params graphql.RawParams
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&params); err != nil {
		// The decoder's message says where, never echoing the body.
		writeResponse(w, http.StatusBadRequest, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("request body is not a GraphQL JSON request: %v", err)}))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	oc, opErr := exec.CreateOperationContext(ctx, &params)
	if opErr != nil {
		status := http.StatusOK
		if errcode.GetErrorKind(opErr) == errcode.KindProtocol {
			status = http.StatusUnprocessableEntity
		}
		writeResponse(w, status, exec.DispatchError(graphql.WithOperationContext(ctx, oc), opErr))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, oc)
	writeResponse(w, http.StatusOK, responses(ctx))
}

// writeResponse writes resp around its data (JSON the executor made),
// which goes out as it is: not decoded, re-encoded or copied.
func writeResponse(w http.ResponseWriter, status int, resp *graphql.Response) {
	head := []byte{'{'}
	if len(resp.Errors) > 0 {
		errs, err := json.Marshal(resp.Errors)
		if err != nil {
			errs = []byte(`[{"message":"internal error","extensions":{"code":"INTERNAL"}}]`)
		}
		head = append(head, `"errors":`...)
		head = append(head, errs...)
		head = append(head, ',')
	}
	head = append(head, `"data":`...)
	data := []byte(resp.Data)
	if len(data) == 0 {
		data = []byte("null")
	}
	var tail []byte
	if len(resp.Extensions) > 0 {
		if ext, err := json.Marshal(resp.Extensions); err == nil {
			tail = append(tail, `,"extensions":`...)
			tail = append(tail, ext...)
		}
	}
	tail = append(tail, '}')
	w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(data)+len(tail)))
	w.WriteHeader(status)
	for _, part := range [][]byte{head, data, tail} {
		if _, err := w.Write(part); err != nil {
			return // the client went away
		}
	}
}
