package project

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// ServiceAccount is the account a sync impersonates (see
// Rules.ServiceAccountFor).
type ServiceAccount struct {
	Namespace, Name string
}

// UserName is the account's Kubernetes user name,
// system:serviceaccount:<namespace>:<name>, the name impersonation asks
// the API server for.
func (s ServiceAccount) UserName() string {
	return "system:serviceaccount:" + s.Namespace + ":" + s.Name
}

// saRule is one compiled spec.destinationServiceAccounts entry.
type saRule struct {
	server, namespace fieldRule
	// accountNamespace and name are the account; accountNamespace is ""
	// when the entry gives only a name (the destination's namespace is
	// used).
	accountNamespace, name string
}

// disallowedInAccount are the characters Argo CD refuses in a
// defaultServiceAccount: glob and path syntax that would make the entry
// look like a pattern.
const disallowedInAccount = `!*[]{}\/`

// compileServiceAccounts compiles spec.destinationServiceAccounts. Each
// entry needs a server and namespace glob (no "!": an entry selects, it
// does not refuse) and a service account, written `name` or
// `namespace:name`, both valid Kubernetes names. Two entries for the same
// server and namespace are refused, as Argo CD's API refuses them: the
// second would never be used.
func compileServiceAccounts(entries []v1alpha1.ApplicationDestinationServiceAccount, probs *problems) []saRule {
	rules := make([]saRule, 0, len(entries))
	seen := map[[2]string]int{}
	for i, e := range entries {
		field := fmt.Sprintf("spec.destinationServiceAccounts[%d]", i)
		rule := saRule{}
		ok := true
		for _, f := range []struct {
			name, value string
			into        *fieldRule
		}{
			{"server", e.Server, &rule.server},
			{"namespace", e.Namespace, &rule.namespace},
		} {
			if strings.HasPrefix(f.value, "!") {
				probs.addf(field+"."+f.name, "%q: '!' is not supported here; an entry selects a service account, it does not refuse", f.value)
				ok = false
				continue
			}
			fr, err := compileField(f.value)
			if err != nil {
				probs.addf(field+"."+f.name, "%v", err)
				ok = false
				continue
			}
			*f.into = fr
		}
		ns, name, err := parseServiceAccount(e.DefaultServiceAccount)
		if err != nil {
			probs.addf(field+".defaultServiceAccount", "%v", err)
			ok = false
		}
		key := [2]string{e.Server, e.Namespace}
		if j, dup := seen[key]; dup {
			probs.addf(field, "server '%s' and namespace '%s' are already given by spec.destinationServiceAccounts[%d], which wins", e.Server, e.Namespace, j)
			ok = false
		} else {
			seen[key] = i
		}
		if ok {
			rule.accountNamespace, rule.name = ns, name
			rules = append(rules, rule)
		}
	}
	return rules
}

// parseServiceAccount reads `name` or `namespace:name`.
func parseServiceAccount(s string) (namespace, name string, err error) {
	if strings.TrimSpace(s) == "" {
		return "", "", fmt.Errorf("a service account is required")
	}
	if strings.ContainsAny(s, disallowedInAccount) {
		return "", "", fmt.Errorf("%q: a service account may not contain any of %s", s, disallowedInAccount)
	}
	name = s
	if i := strings.IndexByte(s, ':'); i >= 0 {
		namespace, name = s[:i], s[i+1:]
		if msgs := validation.IsDNS1123Label(namespace); len(msgs) > 0 {
			return "", "", fmt.Errorf("%q: the namespace before ':' is not a valid namespace name: %s", s, strings.Join(msgs, "; "))
		}
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return "", "", fmt.Errorf("%q: not a valid service account name: %s", s, strings.Join(msgs, "; "))
	}
	return namespace, name, nil
}

// HasServiceAccounts reports whether the project names destination
// service accounts at all.
func (r *Rules) HasServiceAccounts() bool { return len(r.accounts) > 0 }

// ServiceAccountFor returns the service account a sync to the cluster at
// server and the destination namespace (cluster-scoped: "") impersonates:
// that of the first spec.destinationServiceAccounts entry whose server and
// namespace globs match, as Argo CD picks it. An account given without a
// namespace lives in the destination namespace, or in appNamespace (the
// Application's own) when the destination has none. No entry matching is
// a *DeniedError, worded as Argo CD words it.
func (r *Rules) ServiceAccountFor(server, namespace, appNamespace string) (ServiceAccount, error) {
	for i := range r.accounts {
		a := &r.accounts[i]
		if !a.server.matches(server) || !a.namespace.matches(namespace) {
			continue
		}
		sa := ServiceAccount{Namespace: a.accountNamespace, Name: a.name}
		if sa.Namespace == "" {
			sa.Namespace = namespace
		}
		if sa.Namespace == "" {
			sa.Namespace = appNamespace
		}
		return sa, nil
	}
	ns := namespace
	if ns == "" {
		ns = appNamespace
	}
	return ServiceAccount{}, denied(r.name, "no matching service account found for destination server %s and namespace %s", server, ns)
}
