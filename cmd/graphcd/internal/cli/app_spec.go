package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

func newAppManifestsCmd(o *appOptions) *cobra.Command {
	var revision string
	var source int
	c := &cobra.Command{
		Use:   "manifests NAME",
		Short: "Print an application's desired manifests as the repository server renders them",
		Example: `  graphcd app manifests guestbook
  graphcd app manifests guestbook --revision v1.2.0`,
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			var rev *string
			var pos *int
			if revision != "" {
				rev = &revision
			}
			if source > 0 {
				pos = &source
			}
			resp, err := client.ApplicationManifests(c.Context(), cl.GraphQL, o.name(args[0]), o.nsOf(args[0]), rev, pos)
			if err != nil {
				return err
			}
			if resp.Application == nil {
				return notFound(args[0])
			}
			docs := resp.Application.Manifests
			w := c.OutOrStdout()
			if f := o.output.String(); f == "json" {
				if docs == nil {
					docs = []string{}
				}
				return printStructured(w, f, docs)
			}
			for i, d := range docs {
				sep := "---\n"
				if i == 0 {
					sep = ""
				}
				if _, err := fmt.Fprintf(w, "%s%s\n", sep, strings.TrimRight(d, "\n")); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	c.Flags().StringVar(&revision, "revision", "", "render at this revision rather than the target revision")
	c.Flags().IntVar(&source, "source-position", 0, "the source --revision applies to, from 1; the first when 0")
	return c
}

// specEdit is what app set changes; nil fields stay as they are. source
// edits apply to the source at position (see chooseSource).
type specEdit struct {
	repo, path, revision            *string
	destServer, destName, destNS    *string
	project, syncPolicy             *string
	autoPrune, selfHeal, allowEmpty *bool
	source                          []sourceEdit
	position                        int
}

// empty reports whether e changes nothing.
func (e specEdit) empty() bool {
	return e.repo == nil && e.path == nil && e.revision == nil && e.destServer == nil && e.destName == nil &&
		e.destNS == nil && e.project == nil && e.syncPolicy == nil && e.autoPrune == nil && e.selfHeal == nil &&
		e.allowEmpty == nil && len(e.source) == 0
}

// editAppSpec reads the application arg's spec, lets edit change it and
// writes it back; edit's errors are usage errors.
func editAppSpec(c *cobra.Command, o *appOptions, arg string, edit func(spec map[string]any) error) error {
	cl, err := o.connect()
	if err != nil {
		return err
	}
	resp, err := client.ApplicationYAML(c.Context(), cl.GraphQL, o.name(arg), o.nsOf(arg))
	if err != nil {
		return err
	}
	if resp.Application == nil {
		return notFound(arg)
	}
	var obj struct {
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(resp.Application.Yaml), &obj); err != nil {
		return fmt.Errorf("read the application: %w", err)
	}
	if obj.Spec == nil {
		obj.Spec = map[string]any{}
	}
	if err := edit(obj.Spec); err != nil {
		return &command.UsageError{Cmd: c, Err: err}
	}
	spec, err := json.Marshal(obj.Spec)
	if err != nil {
		return err
	}
	out, err := client.UpdateApplicationSpec(c.Context(), cl.GraphQL, client.UpdateApplicationSpecInput{Application: o.ref(arg), Spec: string(spec)})
	if err != nil {
		return err
	}
	return printChanged(c.OutOrStdout(), o.output.String(), &out.UpdateApplicationSpec.AppSummary, "updated")
}

func newAppSetCmd(o *appOptions) *cobra.Command {
	var srcFlags sourceSetFlags
	var position int
	str := func(c *cobra.Command, name string) *string {
		if !c.Flags().Changed(name) {
			return nil
		}
		v, _ := c.Flags().GetString(name)
		return &v
	}
	boolean := func(c *cobra.Command, name string) *bool {
		if !c.Flags().Changed(name) {
			return nil
		}
		v, _ := c.Flags().GetBool(name)
		return &v
	}
	c := &cobra.Command{
		Use:   "set NAME",
		Short: "Change an application's spec: source, Helm, Kustomize, directory and plugin options, destination, project, sync policy",
		Long: `Change an application's spec. Only the flags given change; the source
flags (--repo ... --plugin-env) change the application's source, or, for a
multi-source application, the one --source-position names (from 1).`,
		Example: `  graphcd app set guestbook --revision v1.3.0
  graphcd app set guestbook --sync-policy automated --auto-prune --self-heal
  graphcd app set guestbook --sync-policy none
  graphcd app set web -p image.tag=v2 --helm-set-string build=0042 --values values-prod.yaml
  graphcd app set web --kustomize-image nginx=nginx:1.27 --nameprefix prod- --kustomize-replica web=3
  graphcd app set web --source-position 2 --directory-recurse --directory-include '*.yaml'`,
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			edits, err := srcFlags.edits(c)
			if err != nil {
				return &command.UsageError{Cmd: c, Err: err}
			}
			e := specEdit{
				repo: str(c, "repo"), path: str(c, "path"), revision: str(c, "revision"),
				destServer: str(c, "dest-server"), destName: str(c, "dest-name"), destNS: str(c, "dest-namespace"),
				project: str(c, "project"), syncPolicy: str(c, "sync-policy"),
				autoPrune: boolean(c, "auto-prune"), selfHeal: boolean(c, "self-heal"), allowEmpty: boolean(c, "allow-empty"),
				source: edits, position: position,
			}
			if e.empty() {
				return &command.UsageError{Cmd: c, Err: errors.New("nothing to set: give at least one flag")}
			}
			return editAppSpec(c, o, args[0], e.apply)
		}),
	}
	f := c.Flags()
	f.String("repo", "", "the source's repository URL")
	f.String("path", "", "the source's directory in the repository")
	f.String("revision", "", "the source's target revision (branch, tag, commit or chart version)")
	f.IntVar(&position, "source-position", 0, "the source the source flags change, from 1, for a multi-source application")
	srcFlags.add(f)
	f.String("dest-server", "", "the destination cluster's API server URL")
	f.String("dest-name", "", "the destination cluster's name")
	f.String("dest-namespace", "", "the destination namespace")
	f.String("project", "", "the project")
	f.String("sync-policy", "", "automated, or none for manual syncs only")
	f.Bool("auto-prune", false, "with automated sync, prune resources no longer in Git")
	f.Bool("self-heal", false, "with automated sync, revert changes made in the cluster")
	f.Bool("allow-empty", false, "with automated sync, allow syncing to no resources")
	return c
}

func newAppUnsetCmd(o *appOptions) *cobra.Command {
	var flags sourceUnsetFlags
	var position int
	c := &cobra.Command{
		Use:   "unset NAME",
		Short: "Remove Helm, Kustomize and plugin options from an application's source",
		Long: `Remove options from an application's source, or, for a multi-source
application, from the one --source-position names (from 1). A helm or
kustomize block left empty goes too.`,
		Example: `  graphcd app unset web -p image.tag --values values-prod.yaml
  graphcd app unset web --kustomize-image nginx --nameprefix --namesuffix
  graphcd app unset web --source-position 2 --ref`,
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			if c.Flags().NFlag() == countInherited(c) || (c.Flags().NFlag() == countInherited(c)+1 && c.Flags().Changed("source-position")) {
				return &command.UsageError{Cmd: c, Err: errors.New("nothing to unset: give at least one flag")}
			}
			return editAppSpec(c, o, args[0], func(spec map[string]any) error {
				src, err := chooseSource(spec, position)
				if err != nil {
					return err
				}
				return flags.edit(src)
			})
		}),
	}
	c.Flags().IntVar(&position, "source-position", 0, "the source to change, from 1, for a multi-source application")
	flags.add(c.Flags())
	return c
}

// apply changes spec, an Application's spec as JSON decodes it.
func (e specEdit) apply(spec map[string]any) error {
	if e.repo != nil || e.path != nil || e.revision != nil || len(e.source) > 0 {
		src, err := chooseSource(spec, e.position)
		if err != nil {
			return err
		}
		setString(src, "repoURL", e.repo)
		setString(src, "path", e.path)
		setString(src, "targetRevision", e.revision)
		for _, edit := range e.source {
			if err := edit(src); err != nil {
				return err
			}
		}
	}
	dest, _ := spec["destination"].(map[string]any)
	if dest == nil {
		dest = map[string]any{}
	}
	if e.destServer != nil {
		delete(dest, "name")
	}
	if e.destName != nil {
		delete(dest, "server")
	}
	setString(dest, "server", e.destServer)
	setString(dest, "name", e.destName)
	setString(dest, "namespace", e.destNS)
	spec["destination"] = dest
	setString(spec, "project", e.project)

	policy, _ := spec["syncPolicy"].(map[string]any)
	if policy == nil {
		policy = map[string]any{}
	}
	if e.syncPolicy != nil {
		switch *e.syncPolicy {
		case "automated", "auto":
			if _, ok := policy["automated"].(map[string]any); !ok {
				policy["automated"] = map[string]any{}
			}
		case "none", "manual":
			delete(policy, "automated")
		default:
			return fmt.Errorf("--sync-policy %q: want automated or none", *e.syncPolicy)
		}
	}
	for key, v := range map[string]*bool{"prune": e.autoPrune, "selfHeal": e.selfHeal, "allowEmpty": e.allowEmpty} {
		if v == nil {
			continue
		}
		auto, ok := policy["automated"].(map[string]any)
		if !ok {
			return errors.New("--auto-prune, --self-heal and --allow-empty need automated sync (--sync-policy automated)")
		}
		auto[key] = *v
	}
	if len(policy) > 0 {
		spec["syncPolicy"] = policy
	} else {
		delete(spec, "syncPolicy")
	}
	return nil
}

func setString(m map[string]any, key string, v *string) {
	if v != nil {
		m[key] = *v
	}
}
