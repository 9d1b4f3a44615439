package notifications

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/argoproj/notifications-engine/pkg/triggers"
	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// Trigger is a compiled trigger: conditions on an Application (Argo CD's
// expression language, expr), each sending its templates when true.
type Trigger struct {
	name       string
	conditions []condition
}

type condition struct {
	when, oncePer       *vm.Program
	whenText, describes string
	send                []string
	key                 string
}

// Result is what one condition of a trigger says of an app.
type Result struct {
	// Key names the condition for the record of what was sent: its index
	// and a hash of its expression, so that editing a condition makes it
	// new.
	Key string `json:"key"`
	// Triggered says the condition holds.
	Triggered bool `json:"triggered"`
	// OncePer is the value of oncePer when the condition holds and has
	// one: a notification is sent once per distinct value.
	OncePer string `json:"oncePer,omitempty"`
	// Templates are the condition's send list.
	Templates []string `json:"templates"`
	// Error says why the condition could not be evaluated (it then does
	// not hold): a field missing from this app, say.
	Error string `json:"error,omitempty"`
}

func compileTrigger(name string, conds []triggers.Condition) (*Trigger, error) {
	if len(conds) == 0 || len(conds) > maxConditions {
		return nil, fmt.Errorf("trigger.%s: want 1 to %d conditions, got %d", name, maxConditions, len(conds))
	}
	t := &Trigger{name: name}
	for i, c := range conds {
		if len(c.When) > maxExprBytes || len(c.OncePer) > maxExprBytes {
			return nil, fmt.Errorf("trigger.%s[%d]: an expression is longer than %d bytes", name, i, maxExprBytes)
		}
		if len(c.Send) == 0 {
			return nil, fmt.Errorf("trigger.%s[%d]: send lists no template", name, i)
		}
		when := c.When
		if strings.TrimSpace(when) == "" {
			when = "false"
		}
		prog, err := expr.Compile(when)
		if err != nil {
			return nil, fmt.Errorf("trigger.%s[%d] when: %w", name, i, err)
		}
		cond := condition{when: prog, whenText: c.When, describes: c.Description, send: c.Send, key: conditionKey(i, c.When)}
		if c.OncePer != "" {
			if cond.oncePer, err = expr.Compile(c.OncePer); err != nil {
				return nil, fmt.Errorf("trigger.%s[%d] oncePer: %w", name, i, err)
			}
		}
		t.conditions = append(t.conditions, cond)
	}
	return t, nil
}

// conditionKey is "[<index>].<hash of when>".
func conditionKey(i int, when string) string {
	sum := sha256.Sum256([]byte(when))
	return fmt.Sprintf("[%d].%s", i, base64.RawURLEncoding.EncodeToString(sum[:12]))
}

// Name is the trigger's name.
func (t *Trigger) Name() string { return t.name }

// Descriptions are the conditions' descriptions, in order.
func (t *Trigger) Descriptions() []string {
	out := make([]string, len(t.conditions))
	for i, c := range t.conditions {
		out[i] = c.describes
	}
	return out
}

// Run evaluates every condition on app (the Application as a JSON
// object). A condition that fails to evaluate does not hold, and says
// why; a result that is not true does not hold.
func (t *Trigger) Run(app map[string]any) []Result {
	env := environment(app)
	out := make([]Result, 0, len(t.conditions))
	for _, c := range t.conditions {
		r := Result{Key: c.key, Templates: c.send}
		v, err := expr.Run(c.when, env)
		if err != nil {
			r.Error = err.Error()
			out = append(out, r)
			continue
		}
		r.Triggered, _ = v.(bool)
		if r.Triggered && c.oncePer != nil {
			once, err := expr.Run(c.oncePer, env)
			if err != nil {
				r.Triggered, r.Error = false, "oncePer: "+err.Error()
			} else {
				r.OncePer = fmt.Sprint(once)
			}
		}
		out = append(out, r)
	}
	return out
}

// environment is what expressions and templates read: the app, and the
// helpers Argo CD's notifications give them (time, strings, repo).
func environment(app map[string]any) map[string]any {
	return map[string]any{
		"app": app,
		"time": map[string]any{
			"Now": time.Now,
			"Parse": func(s string) time.Time {
				t, _ := time.Parse(time.RFC3339, s)
				return t
			},
		},
		"strings": map[string]any{
			"ReplaceAll": strings.ReplaceAll,
			"ToUpper":    strings.ToUpper,
			"ToLower":    strings.ToLower,
		},
		"repo": map[string]any{
			"RepoURLToHTTPS":    repoURLToHTTPS,
			"FullNameByRepoURL": fullNameByRepoURL,
		},
	}
}

// repoURLToHTTPS turns a git URL (scp-like or ssh://) into the https://
// address of the repository's page, without credentials or .git.
func repoURLToHTTPS(raw string) string {
	s := strings.TrimSuffix(raw, ".git")
	if host, path, ok := strings.Cut(strings.TrimPrefix(s, "git@"), ":"); ok && !strings.Contains(s, "://") {
		return "https://" + host + "/" + path
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return raw
	}
	u.Scheme, u.User = "https", nil
	return u.String()
}

// fullNameByRepoURL is the repository's path, "owner/name".
func fullNameByRepoURL(raw string) string {
	u, err := url.Parse(repoURLToHTTPS(raw))
	if err != nil {
		return ""
	}
	return strings.Trim(u.Path, "/")
}
