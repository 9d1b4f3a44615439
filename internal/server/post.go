package server

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"

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

// writeResponse writes resp, copying its data (JSON the executor made)
// without decoding or re-encoding it.
func writeResponse(w http.ResponseWriter, status int, resp *graphql.Response) {
	var buf bytes.Buffer
	buf.Grow(len(resp.Data) + 64)
	buf.WriteByte('{')
	if len(resp.Errors) > 0 {
		errs, err := json.Marshal(resp.Errors)
		if err != nil {
			errs = []byte(`[{"message":"internal error","extensions":{"code":"INTERNAL"}}]`)
		}
		buf.WriteString(`"errors":`)
		buf.Write(errs)
		buf.WriteByte(',')
	}
	buf.WriteString(`"data":`)
	if len(resp.Data) == 0 {
		buf.WriteString("null")
	} else {
		buf.Write(resp.Data)
	}
	if len(resp.Extensions) > 0 {
		if ext, err := json.Marshal(resp.Extensions); err == nil {
			buf.WriteString(`,"extensions":`)
			buf.Write(ext)
		}
	}
	buf.WriteByte('}')
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
