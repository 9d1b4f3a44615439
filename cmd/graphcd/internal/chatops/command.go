package chatops

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const (
	// maxCommandBody caps a slash command's form; Slack's are well under
	// a kilobyte.
	maxCommandBody = 16 << 10
	// signatureWindow is how old (or how far in the future) a signed
	// request may be, as Slack recommends, so a captured request cannot
	// be replayed later.
	signatureWindow = 5 * time.Minute
	// commandTimeout keeps the answer within the 3 seconds Slack waits.
	commandTimeout = 2500 * time.Millisecond
)

// The slash commands, and what to tell those who get one wrong.
const (
	cmdSync    = "/sync"
	cmdApprove = "/approve"
	usageArgs  = " APP [NAMESPACE]"
)

// notMapped answers a chat user the identity file does not list. It is
// polite and says what to do, without naming anyone's rights.
const notMapped = "Sorry, your chat account is not linked to a graphcd user, so I cannot act for you. " +
	"Ask graphcd's operators to add your user ID to the bot's identity file."

func (b *bot) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/slack/command", b.handleCommand)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	return mux
}

// handleCommand answers a Slack slash command: it checks the request's
// signature, parses "/sync APP [NAMESPACE]" or "/approve APP
// [NAMESPACE]", finds who sent it and asks graphcd.
func (b *bot) handleCommand(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		http.Error(w, "want a form post", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxCommandBody))
	if err != nil {
		http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
		return
	}
	if err := verifySignature(b.signingSecret, r.Header, body, b.now()); err != nil {
		b.log.Warn("refused a slash command", "remote", r.RemoteAddr, "err", err)
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	cmd, err := parseCommand(form.Get("command"), form.Get("text"))
	if err != nil {
		reply(w, "ephemeral", err.Error())
		return
	}
	team, user := form.Get("team_id"), form.Get("user_id")
	id, mapped := b.identities.Lookup(team, user)
	if !mapped && (b.identities != nil || cmd.name == cmdApprove) {
		b.log.Info("refused a chat user the identity file does not map", "command", cmd.name, "team", team, "user", user)
		reply(w, "ephemeral", notMapped)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), commandTimeout)
	defer cancel()
	done, err := b.execute(ctx, cmd, id)
	var apiErr apiError
	switch {
	case errors.As(err, &apiErr):
		// graphcd's messages are for users: NOT_FOUND, FORBIDDEN, CONFLICT.
		reply(w, "ephemeral", fmt.Sprintf("%s failed: %s", cmd.what(), apiErr))
	case err != nil:
		b.log.Error("command", "command", cmd.name, "app", cmd.app, "err", err)
		reply(w, "ephemeral", cmd.what()+" failed: graphcd could not be reached")
	default:
		b.log.Info("command done", "command", cmd.name, "app", cmd.app, "namespace", cmd.namespace,
			"team", team, "user", user, "as", id.User)
		reply(w, "in_channel", done)
	}
}

// execute asks graphcd to do cmd for id and returns the answer for the
// channel.
func (b *bot) execute(ctx context.Context, cmd command, id Identity) (string, error) {
	switch cmd.name {
	case cmdSync:
		if err := b.syncApp(ctx, cmd.app, cmd.namespace); err != nil {
			return "", err
		}
		return "sync of " + cmd.app + " requested", nil
	case cmdApprove:
		missing, err := b.approveSync(ctx, cmd.app, cmd.namespace, id)
		if err != nil {
			return "", err
		}
		return "sync of " + cmd.app + " approved by " + id.User + approvalsLeft(missing), nil
	}
	return "", fmt.Errorf("unknown command %q", cmd.name) // parseCommand let it through
}

// approvalsLeft ends the answer to an approval: what the sync still waits
// for.
func approvalsLeft(missing int) string {
	switch missing {
	case 0:
		return ""
	case 1:
		return "; it waits for 1 more approval"
	default:
		return fmt.Sprintf("; it waits for %d more approvals", missing)
	}
}

// reply writes a slash command's immediate answer; responseType is
// "ephemeral" (only the caller sees it) or "in_channel".
func reply(w http.ResponseWriter, responseType, text string) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"response_type": responseType, "text": slackEscape(text)})
}

// verifySignature checks Slack's v0 request signature: X-Slack-Signature
// must be "v0=" and the hex HMAC-SHA256, keyed with the signing secret,
// of "v0:<X-Slack-Request-Timestamp>:<body>", and the timestamp must lie
// within signatureWindow of now.
func verifySignature(secret []byte, h http.Header, body []byte, now time.Time) error {
	ts := h.Get("X-Slack-Request-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("missing or malformed X-Slack-Request-Timestamp")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > signatureWindow || d < -signatureWindow {
		return errors.New("X-Slack-Request-Timestamp is outside the 5-minute window")
	}
	got, ok := strings.CutPrefix(h.Get("X-Slack-Signature"), "v0=")
	if !ok {
		return errors.New("missing or malformed X-Slack-Signature")
	}
	sig, err := hex.DecodeString(got)
	if err != nil {
		return errors.New("missing or malformed X-Slack-Signature")
	}
	if !hmac.Equal(sig, sign(secret, ts, body)) {
		return errors.New("X-Slack-Signature does not match")
	}
	return nil
}

// sign is the v0 HMAC of a request with timestamp ts and body.
func sign(secret []byte, ts string, body []byte) []byte {
	mac := hmac.New(sha256.New, secret)
	_, _ = io.WriteString(mac, "v0:"+ts+":")
	_, _ = mac.Write(body)
	return mac.Sum(nil)
}

// command is a parsed "/sync APP [NAMESPACE]" or "/approve APP
// [NAMESPACE]".
type command struct {
	name, app, namespace string
}

// what names what cmd asks for, in an answer that it failed.
func (c command) what() string {
	if c.name == cmdApprove {
		return "approval of the sync of " + c.app
	}
	return "sync of " + c.app
}

var (
	// validApp is a Kubernetes object name (a DNS-1123 subdomain).
	validApp = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	// validNamespace is a DNS-1123 label.
	validNamespace = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
)

// parseCommand parses a slash command's command and text fields. Its
// errors are replies for the user.
func parseCommand(name, text string) (command, error) {
	if name != cmdSync && name != cmdApprove {
		return command{}, errors.New("unknown command; use " + cmdSync + usageArgs + " or " + cmdApprove + usageArgs)
	}
	usage := "usage: " + name + usageArgs
	args := strings.Fields(text)
	if len(args) == 0 || len(args) > 2 {
		return command{}, errors.New(usage)
	}
	c := command{name: name, app: args[0]}
	if !validApp.MatchString(c.app) {
		return command{}, errors.New("not an application name; " + usage)
	}
	if len(args) == 2 {
		c.namespace = args[1]
		if !validNamespace.MatchString(c.namespace) {
			return command{}, errors.New("not a namespace name; " + usage)
		}
	}
	return c, nil
}
