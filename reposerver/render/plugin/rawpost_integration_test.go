//go:build integration

package plugin

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"testing"
)

// postArchive sends a hand-made archive to /v1/discover.
func postArchive(t *testing.T, sock string, tarball []byte) ([]byte, error) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	meta, _ := json.Marshal(wireRequest{AppPath: "."})
	p, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {contentTypeJSON}})
	_, _ = p.Write(meta)
	p, _ = mw.CreatePart(textproto.MIMEHeader{"Content-Type": {contentTypeTar}})
	_, _ = p.Write(tarball)
	_ = mw.Close()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://plugin"+pathDiscover, &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "multipart/mixed; boundary="+mw.Boundary())
	out, status, err := do(httpClient(sock), req, 1<<20)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, remoteErr("by-file", status, out)
	}
	return out, nil
}
