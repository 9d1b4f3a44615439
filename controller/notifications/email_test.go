package notifications

import (
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// mail is one message an SMTP server received.
type mail struct {
	user, from string
	to         []string
	data       string
}

// smtpSession records one client's message; it accepts only user/pass.
type smtpSession struct {
	got  chan<- mail
	m    mail
	user string
}

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		if username != "graphcd" || password != "mail-pass-123" {
			return errors.New("invalid credentials")
		}
		s.user = username
		return nil
	}), nil
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.m.from = from
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.m.to = append(s.m.to, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.m.user, s.m.data = s.user, string(b)
	s.got <- s.m
	return nil
}

func (s *smtpSession) Reset()        { s.m = mail{} }
func (s *smtpSession) Logout() error { return nil }

// The email service sends a rendered template through a real SMTP server
// (go-smtp, in this process, on loopback) with the username and password
// the Secret holds: the subject and body the template gives.
func TestEmailThroughSMTP(t *testing.T) {
	got := make(chan mail, 1)
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &smtpSession{got: got}, nil }))
	srv.Domain, srv.AllowInsecureAuth = "localhost", true // loopback only
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)

	c, err := Parse(map[string]string{
		"service.email": "host: 127.0.0.1\nport: " + port + "\nfrom: graphcd@example.com\nusername: $email-username\npassword: $email-password\n",
		"template.app-sync-failed": `email:
  subject: "Sync of {{.app.metadata.name}} failed"
  body: "{{.app.status.operationState.message}}"
message: unused for email`,
	}, map[string][]byte{"email-username": []byte("graphcd"), "email-password": []byte("mail-pass-123")})
	if err != nil {
		t.Fatal(err)
	}
	failed := app(t, failedApp)
	dest := services.Destination{Service: "email", Recipient: "oncall@example.com"}
	n, err := c.Render(failed, dest, "app-sync-failed")
	if err != nil {
		t.Fatal(err)
	}
	sender, err := c.Sender("email")
	if err != nil {
		t.Fatal(err)
	}
	if err := sender.Send(*n, dest); err != nil {
		t.Fatal(c.Redact(err.Error()))
	}
	m := <-got
	if m.user != "graphcd" || m.from != "graphcd@example.com" || len(m.to) != 1 || m.to[0] != "oncall@example.com" {
		t.Errorf("envelope %+v", m)
	}
	if !strings.Contains(m.data, "Subject: Sync of shop failed") || !strings.Contains(m.data, "one or more objects failed to apply") {
		t.Errorf("message:\n%s", m.data)
	}
}
