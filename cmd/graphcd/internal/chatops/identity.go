package chatops

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// Identity is the graphcd user a chat user acts as.
type Identity struct {
	// User is the graphcd user name, as an SSO login or a local account
	// would have it.
	User string `json:"user"`
	// Groups are the user's graphcd groups (SSO groups), which RBAC
	// policies and approval policies name.
	Groups []string `json:"groups,omitempty"`
}

// chatUser is a Slack user: the user_id and team_id of a slash command.
type chatUser struct{ team, user string }

// Identities maps chat users to graphcd identities; see ParseIdentities.
// The nil *Identities maps no one.
type Identities struct {
	byUser map[chatUser]Identity
}

// identityFile is the identity file's format:
//
//	users:
//	- slack: U0123ABCD   # the user_id of the user's slash commands
//	  team: T0456EFGH    # their workspace's team_id
//	  user: alice
//	  groups: [release]
type identityFile struct {
	Users []struct {
		Slack string `json:"slack"`
		Team  string `json:"team"`
		Identity
	} `json:"users"`
}

// ParseIdentities reads an identity file. Every entry needs slack, team
// and user; unknown fields and a chat user listed twice are errors, so a
// typo cannot quietly grant or drop someone's rights.
func ParseIdentities(raw []byte) (*Identities, error) {
	var f identityFile
	if err := yaml.UnmarshalStrict(raw, &f); err != nil {
		return nil, err
	}
	ids := &Identities{byUser: make(map[chatUser]Identity, len(f.Users))}
	for i, u := range f.Users {
		if err := checkEntry(u.Slack, u.Team, u.Identity); err != nil {
			return nil, fmt.Errorf("users[%d]: %w", i, err)
		}
		key := chatUser{team: u.Team, user: u.Slack}
		if _, dup := ids.byUser[key]; dup {
			return nil, fmt.Errorf("users[%d]: slack user %s of team %s is listed twice", i, u.Slack, u.Team)
		}
		ids.byUser[key] = u.Identity
	}
	return ids, nil
}

func checkEntry(slack, team string, id Identity) error {
	for _, f := range []struct{ name, v string }{{"slack", slack}, {"team", team}, {"user", id.User}} {
		if f.v == "" {
			return fmt.Errorf("%s is required", f.name)
		}
		if strings.ContainsFunc(f.v, isSpaceOrControl) {
			return fmt.Errorf("%s %q holds a space or a control character", f.name, f.v)
		}
	}
	for _, g := range id.Groups {
		if g == "" || strings.ContainsFunc(g, isControl) {
			return errors.New("a group is empty or holds a control character")
		}
	}
	return nil
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }
func isControl(r rune) bool        { return r < ' ' || r == 0x7f }

// Lookup returns the identity of the chat user user of team.
func (ids *Identities) Lookup(team, user string) (Identity, bool) {
	if ids == nil || team == "" || user == "" {
		return Identity{}, false
	}
	id, ok := ids.byUser[chatUser{team: team, user: user}]
	return id, ok
}

// Len is the number of chat users mapped.
func (ids *Identities) Len() int {
	if ids == nil {
		return 0
	}
	return len(ids.byUser)
}
