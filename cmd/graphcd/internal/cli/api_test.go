package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/client"
)

// Passwords piped to update-password and repo add: one a line, line
// endings dropped, a missing line an error.
func TestSecretsFromStdin(t *testing.T) {
	for _, tc := range []struct {
		name, stdin string
		want        []string
		wantErr     string
	}{
		{name: "two lines", stdin: "current pw\nnew pw\n", want: []string{"current pw", "new pw"}},
		{name: "CRLF and no final newline", stdin: "current\r\nnew", want: []string{"current", "new"}},
		{name: "second missing", stdin: "current\n", want: []string{"current"}, wantErr: "no new password on stdin"},
		{name: "empty line", stdin: "\nnew\n", wantErr: "no current password on stdin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &cobra.Command{}
			c.SetIn(strings.NewReader(tc.stdin))
			s := newSecrets(c, &bytes.Buffer{})
			var got []string
			var err error
			for _, what := range []string{"current password", "new password"} {
				var line string
				if line, err = s.ask(what); err != nil {
					break
				}
				got = append(got, line)
			}
			if d := cmp.Diff(got, tc.want); d != "" {
				t.Errorf("lines (-got +want):\n%s", d)
			}
			if (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
				t.Errorf("error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestPrintToken(t *testing.T) {
	expires := time.Date(2026, 12, 30, 1, 2, 3, 0, time.UTC)
	tok := &client.IssuedToken{Id: "pipeline", Token: "eyJ.token", IssuedAt: expires.Add(-time.Hour), ExpiresAt: &expires}
	for format, want := range map[string]string{
		"table": "eyJ.token\n",
		"name":  "pipeline\n",
		"json": `{
  "id": "pipeline",
  "token": "eyJ.token",
  "issuedAt": "2026-12-30T00:02:03Z",
  "expiresAt": "2026-12-30T01:02:03Z"
}
`,
	} {
		var b bytes.Buffer
		if err := printToken(&b, format, tok); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(b.String(), want); d != "" {
			t.Errorf("-o %s (-got +want):\n%s", format, d)
		}
	}
}

func TestCheckDuration(t *testing.T) {
	for in, ok := range map[string]bool{"": true, "720h": true, "90m": true, "soon": false, "-1h": false, "0s": false} {
		_, err := checkDuration(&cobra.Command{}, "expires-in", in)
		if (err == nil) != ok {
			t.Errorf("checkDuration(%q) = %v, want ok %t", in, err, ok)
		}
	}
}
