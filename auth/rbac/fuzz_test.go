package rbac

import "testing"

// Hostile policies never panic; what Parse accepts always compiles.
func FuzzParse(f *testing.F) {
	f.Add("p, a, applications, get, */*, allow\ng, a, role:admin", "glob", "[groups]")
	f.Add(`p, a, applications, "(get|sync)", "^x/.{1,3}$", deny`, "regex", "")
	f.Add("p, a, *, {get,[!x]}, \\", "glob", "[")
	f.Fuzz(func(t *testing.T, csv, mode, scopes string) {
		p, err := Parse(map[string]string{"policy.csv": csv, "policy.matchMode": mode, "scopes": scopes, "policy.default": "role:readonly"})
		if p == nil {
			if err == nil {
				t.Fatal("no policy and no error")
			}
			return
		}
		e, err := NewEnforcer(p)
		if err != nil {
			t.Fatalf("a parsed policy does not compile: %v", err)
		}
		for _, r := range p.Rules {
			e.Enforce(r.Subject, []string{r.Subject}, r.Resource, r.Action, r.Object)
			// A subject's view decides as casbin over the whole policy.
			want, err := e.casbin.Enforce(r.Subject, r.Resource, r.Action, r.Object)
			if got, derr := e.decide(r.Subject, r.Resource, r.Action, r.Object); err == nil && (derr != nil || got != want) {
				t.Fatalf("decide(%q, %q, %q, %q) = %v, %v; the whole policy says %v", r.Subject, r.Resource, r.Action, r.Object, got, derr, want)
			}
		}
	})
}
