package admin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

type adminRBACOptions struct {
	rbacConfig, policyFile, defaultRole string
	groups, projects                    []string
}

// newRBACCmd answers and checks RBAC questions offline, with the
// policy code the server uses.
func newRBACCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "rbac",
		Short: "Check RBAC policies offline: may a subject do something, is a policy valid",
		Args:  command.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newRBACCanCmd(), newRBACValidateCmd())
	return c
}

func (o *adminRBACOptions) addPolicyFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.rbacConfig, "rbac-config", "", "graphcd-rbac-cm / argocd-rbac-cm ConfigMap (YAML, - for stdin)")
	f.StringVar(&o.policyFile, "policy-file", "", "policy CSV file, added to the ConfigMap's policy")
	f.StringArrayVar(&o.projects, "projects", nil, "file of AppProject manifests whose roles join the policy (repeatable)")
}

func newRBACCanCmd() *cobra.Command {
	o := &adminRBACOptions{}
	c := &cobra.Command{
		Use:   "can SUBJECT ACTION RESOURCE [OBJECT]",
		Short: "Say whether SUBJECT may do ACTION on OBJECT of RESOURCE",
		Long: `Say whether SUBJECT (a user, an account, or proj:<project>:<role>), a member
of --groups, may do ACTION on OBJECT of RESOURCE under the policy of
--rbac-config (a graphcd-rbac-cm, or an Argo CD argocd-rbac-cm as it is) and
--policy-file, plus the built-in roles. Prints "yes" and exits 0, or prints
"no" and exits 1; exits 2 on error. Invalid policy lines are reported on
stderr and left out, as the server does.

Application objects are <project>/<app> or <project>/<namespace>/<app>;
an OBJECT left out, or *, is */* for applications, applicationsets, logs and
exec, and * for the rest. RESOURCE may be one of Argo CD's short names (app,
apps, application, cert, cluster, key, log, proj, repo ...). A resource
graphcd does not know is answered from the policy like any other (no, unless
a rule's pattern covers it), with a warning.
--projects FILE adds the roles of the AppProjects in FILE: their policies
(subject proj:<project>:<role>) and their SSO group bindings.

  graphcd admin rbac can alice sync applications my-project/guestbook \
    --rbac-config argocd-rbac-cm.yaml --groups my-org:team-alpha`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 3 && len(args) != 4 {
				return &command.UsageError{Cmd: c, Err: fmt.Errorf("%q takes SUBJECT ACTION RESOURCE [OBJECT], got %d argument(s)", c.CommandPath(), len(args))}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error { return runAdminRBACCan(c, o, args) },
	}
	o.addPolicyFlags(c)
	c.Flags().StringVar(&o.defaultRole, "default-role", "", "role every subject has, instead of the ConfigMap's policy.default")
	c.Flags().StringSliceVar(&o.groups, "groups", nil, "groups of the subject, comma-separated (as from an SSO token)")
	return c
}

func newRBACValidateCmd() *cobra.Command {
	o := &adminRBACOptions{}
	c := &cobra.Command{
		Use:   "validate --rbac-config CM.yaml",
		Short: "Report every invalid line of an RBAC policy",
		Long: `Check the policy of --rbac-config (a graphcd-rbac-cm, or an Argo CD
argocd-rbac-cm), --policy-file and the roles of the AppProjects in
--projects. Prints one line per invalid policy line,
naming the file, the key, the line and the reason, and exits 1 if there is
any; exits 0 when the policy is valid and 2 when it cannot be read or its
policy.matchMode or scopes are invalid.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runAdminRBACValidate(c, o) },
	}
	o.addPolicyFlags(c)
	return c
}

func runAdminRBACCan(c *cobra.Command, o *adminRBACOptions, args []string) error {
	subject, action := args[0], args[1]
	resource := rbac.ResolveResourceName(args[2])
	var object string
	if len(args) == 4 {
		object = args[3]
	}
	if object == "" || object == "*" {
		object = rbac.AnyObject(resource)
	}
	p, problems, err := loadRBACPolicy(c, o)
	if err != nil {
		return command.ExitCodeError{Code: command.ExitUsage, Err: err}
	}
	for _, msg := range problems {
		_, _ = fmt.Fprintf(c.ErrOrStderr(), "graphcd: warning: %s (line left out)\n", msg)
	}
	if c.Flags().Changed("default-role") {
		p.DefaultRole = o.defaultRole
	}
	e, err := rbac.NewEnforcer(p)
	if err != nil {
		return command.ExitCodeError{Code: command.ExitUsage, Err: err}
	}
	problems, err = addProjectRoles(c, e, o.projects)
	if err != nil {
		return command.ExitCodeError{Code: command.ExitUsage, Err: err}
	}
	for _, msg := range problems {
		_, _ = fmt.Fprintf(c.ErrOrStderr(), "graphcd: warning: %s (line left out)\n", msg)
	}
	if !rbac.Known(resource) {
		_, _ = fmt.Fprintf(c.ErrOrStderr(), "graphcd: warning: unknown resource %q (want one of %s); graphcd never asks about it\n", resource, strings.Join(rbac.Resources, ", "))
	}
	if e.Enforce(subject, o.groups, resource, action, object) {
		_, err := fmt.Fprintln(c.OutOrStdout(), "yes")
		return err
	}
	if _, err := fmt.Fprintln(c.OutOrStdout(), "no"); err != nil {
		return err
	}
	return command.ExitCodeError{Code: command.ExitError}
}

func runAdminRBACValidate(c *cobra.Command, o *adminRBACOptions) error {
	if o.rbacConfig == "" && o.policyFile == "" && len(o.projects) == 0 {
		return &command.UsageError{Cmd: c, Err: errors.New("give --rbac-config, --policy-file or --projects")}
	}
	p, problems, err := loadRBACPolicy(c, o)
	if err != nil {
		return command.ExitCodeError{Code: command.ExitUsage, Err: err}
	}
	e, err := rbac.NewEnforcer(p)
	if err != nil {
		return command.ExitCodeError{Code: command.ExitUsage, Err: err}
	}
	projectProblems, err := addProjectRoles(c, e, o.projects)
	if err != nil {
		return command.ExitCodeError{Code: command.ExitUsage, Err: err}
	}
	problems = append(problems, projectProblems...)
	out := c.OutOrStdout()
	for _, msg := range problems {
		if _, err := fmt.Fprintln(out, msg); err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		return command.ExitCodeError{Code: command.ExitError, Err: fmt.Errorf("%d invalid policy line(s)", len(problems))}
	}
	_, err = fmt.Fprintln(out, "policy is valid")
	return err
}

// loadRBACPolicy reads --rbac-config and --policy-file. Invalid lines are
// returned as messages naming the file, and, for a ConfigMap whose
// policies are literal blocks, the line in the file.
func loadRBACPolicy(c *cobra.Command, o *adminRBACOptions) (*rbac.Policy, []string, error) {
	data, fileLines := map[string]string{}, map[string]int{}
	if o.rbacConfig != "" {
		b, err := command.ReadInput(c, o.rbacConfig)
		if err != nil {
			return nil, nil, err
		}
		if data, fileLines, err = parseRBACConfigMap(b); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", o.rbacConfig, err)
		}
	}
	p, err := rbac.Parse(data)
	var problems []string
	var ve *rbac.ValidationError
	switch {
	case errors.As(err, &ve):
		for _, l := range ve.Lines {
			problems = append(problems, describeLine(o.rbacConfig, fileLines, l))
		}
	case err != nil:
		return nil, nil, fmt.Errorf("%s: %w", o.rbacConfig, err)
	}
	if o.policyFile != "" {
		b, err := command.ReadInput(c, o.policyFile)
		if err != nil {
			return nil, nil, err
		}
		if err := p.AddCSV(o.policyFile, string(b)); errors.As(err, &ve) {
			for _, l := range ve.Lines {
				problems = append(problems, l.Error())
			}
		}
	}
	return p, problems, nil
}

// addProjectRoles loads the roles of the AppProjects in files into e and
// returns their invalid policy lines.
func addProjectRoles(c *cobra.Command, e *rbac.Enforcer, files []string) ([]string, error) {
	var problems []string
	for _, file := range files {
		b, err := command.ReadInput(c, file)
		if err != nil {
			return nil, err
		}
		for _, doc := range splitDocuments(file, b) {
			if doc.err != nil {
				return nil, doc.err
			}
			for _, obj := range doc.objs {
				if obj.GetKind() != "AppProject" {
					continue
				}
				var proj v1alpha1.AppProject
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &proj); err != nil {
					return nil, fmt.Errorf("%s: AppProject %s: %w", file, obj.GetName(), err)
				}
				var ve *rbac.ValidationError
				if err := e.SetProjectRoles(proj.Name, proj.Spec.Roles); errors.As(err, &ve) {
					for _, l := range ve.Lines {
						problems = append(problems, fmt.Sprintf("%s: %s", file, l.Error()))
					}
				} else if err != nil {
					return nil, fmt.Errorf("%s: %w", file, err)
				}
			}
		}
	}
	return problems, nil
}

func describeLine(file string, fileLines map[string]int, l *rbac.LineError) string {
	if start, ok := fileLines[l.Key]; ok {
		return fmt.Sprintf("%s:%d: %s", file, start+l.Line, l.Error())
	}
	return fmt.Sprintf("%s: %s", file, l.Error())
}

// parseRBACConfigMap returns the data of a ConfigMap manifest and, for
// each key whose value is a literal block (policy.csv: |), the file line
// just before the block's first line.
func parseRBACConfigMap(manifest []byte) (map[string]string, map[string]int, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(manifest)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, errors.New("file is empty")
		}
		return nil, nil, err
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("line %d: want a ConfigMap object", root.Line)
	}
	var kind string
	var dataNode *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "kind":
			kind = root.Content[i+1].Value
		case "data":
			dataNode = root.Content[i+1]
		}
	}
	if kind != "ConfigMap" {
		return nil, nil, fmt.Errorf("kind is %q, want ConfigMap", kind)
	}
	data, lines := map[string]string{}, map[string]int{}
	if dataNode == nil {
		return data, lines, nil
	}
	if dataNode.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("line %d: data is not a map", dataNode.Line)
	}
	for i := 0; i+1 < len(dataNode.Content); i += 2 {
		k, v := dataNode.Content[i], dataNode.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return nil, nil, fmt.Errorf("line %d: data.%s is not a string", v.Line, k.Value)
		}
		data[k.Value] = v.Value
		if v.Style == yaml.LiteralStyle {
			lines[k.Value] = v.Line
		}
	}
	return data, lines, nil
}
