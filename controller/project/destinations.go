package project

import (
	"fmt"
	"strings"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// fieldRule is one glob of a destination entry; a nil glob is an empty
// field, which matches only an empty value.
type fieldRule struct {
	deny bool
	g    *glob
}

func (f fieldRule) matches(value string) bool {
	if f.g == nil {
		return value == ""
	}
	return f.g.match(value)
}

// destRule is one compiled spec.destinations entry. An entry with any
// field negated is a deny entry: it never allows anything.
type destRule struct {
	server, name, namespace fieldRule
	deny                    bool
	text                    string // the entry as written, for messages
}

func compileDestinations(dests []v1alpha1.ApplicationDestination, probs *problems) []destRule {
	rules := make([]destRule, 0, len(dests))
	for i, d := range dests {
		field := fmt.Sprintf("spec.destinations[%d]", i)
		rule := destRule{text: destinationText(d)}
		ok := true
		for _, f := range []struct {
			name, value string
			into        *fieldRule
		}{
			{"server", d.Server, &rule.server},
			{"name", d.Name, &rule.name},
			{"namespace", d.Namespace, &rule.namespace},
		} {
			fr, err := compileField(f.value)
			if err != nil {
				probs.addf(field+"."+f.name, "%v", err)
				ok = false
				continue
			}
			*f.into = fr
			rule.deny = rule.deny || fr.deny
		}
		if ok {
			rules = append(rules, rule)
		}
	}
	return rules
}

// compileField compiles a destination glob, with an optional leading "!".
func compileField(value string) (fieldRule, error) {
	pattern, deny := strings.CutPrefix(value, "!")
	if deny && pattern == "*" {
		return fieldRule{}, fmt.Errorf("'!*' denies everything; remove the entry instead")
	}
	if pattern == "" {
		if deny {
			return fieldRule{}, fmt.Errorf("'!' needs a pattern after it")
		}
		return fieldRule{}, nil
	}
	g, err := compileGlob(pattern, noSeparator)
	if err != nil {
		return fieldRule{}, fmt.Errorf("pattern %q: %w", value, err)
	}
	return fieldRule{deny: deny, g: g}, nil
}

// DestinationAllowed reports whether applications of the project may
// deploy to the cluster given by server and/or name, in namespace ("" for
// cluster-scoped resources). The destination must be allowed by an entry
// of spec.destinations without "!" — its server or its name matches, and
// its namespace matches — and refused by no entry with a negated field.
//
// A negated field refuses on its own, whatever the entry's other fields:
// {server: '*', namespace: '!kube-system'} refuses kube-system on every
// cluster. When server or name is unknown (""), a negated server or name
// pattern refuses, because the cluster might be the one it names; pass
// both when the cluster is registered.
func (r *Rules) DestinationAllowed(server, name, namespace string) error {
	allowed := false
	for i := range r.dests {
		d := &r.dests[i]
		if d.deny {
			if d.refuses(server, name, namespace) {
				return denied(r.name, "application destination %s is not permitted in project '%s' (denied by destination %s)",
					destinationWords(server, name, namespace), r.name, d.text)
			}
			continue
		}
		if d.allows(server, name, namespace) {
			allowed = true
		}
	}
	if !allowed {
		return denied(r.name, "application destination %s do not match any of the allowed destinations in project '%s'",
			destinationWords(server, name, namespace), r.name)
	}
	return nil
}

// allows applies an entry without negation: server or name, and namespace.
func (d *destRule) allows(server, name, namespace string) bool {
	cluster := (server != "" && d.server.matches(server)) || (name != "" && d.name.matches(name))
	return cluster && d.namespace.matches(namespace)
}

// refuses applies the negated fields of a deny entry.
func (d *destRule) refuses(server, name, namespace string) bool {
	if d.server.deny && (server == "" || d.server.g.match(server)) {
		return true
	}
	if d.name.deny && (name == "" || d.name.g.match(name)) {
		return true
	}
	return d.namespace.deny && d.namespace.g.match(namespace)
}

// destinationWords names a destination as Argo CD's messages do.
func destinationWords(server, name, namespace string) string {
	var parts []string
	if server != "" {
		parts = append(parts, fmt.Sprintf("server '%s'", server))
	}
	if name != "" {
		parts = append(parts, fmt.Sprintf("name '%s'", name))
	}
	parts = append(parts, fmt.Sprintf("namespace '%s'", namespace))
	if len(parts) == 2 {
		return parts[0] + " and " + parts[1]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// destinationText renders an entry for messages, such as
// {server: '*', namespace: '!kube-system'}.
func destinationText(d v1alpha1.ApplicationDestination) string {
	var parts []string
	if d.Server != "" {
		parts = append(parts, fmt.Sprintf("server: '%s'", d.Server))
	}
	if d.Name != "" {
		parts = append(parts, fmt.Sprintf("name: '%s'", d.Name))
	}
	parts = append(parts, fmt.Sprintf("namespace: '%s'", d.Namespace))
	return "{" + strings.Join(parts, ", ") + "}"
}
