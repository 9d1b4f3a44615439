package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/controller/sync"
)

type adminSyncPlanOptions struct {
	files       []string
	namespace   string
	syncOptions []string
	output      *command.Enum
}

func newSyncPlanCmd() *cobra.Command {
	o := &adminSyncPlanOptions{output: command.NewEnum("text", "text", "json")}
	c := &cobra.Command{
		Use:   "sync-plan -f PATH...",
		Short: "Print the order in which a sync would apply manifests and run hooks",
		Long: `Plan a sync of the manifests in -f with the planner of real syncs: phases
(PreSync, Sync, PostSync, then the SyncFail hooks that run only on failure),
waves, kind order, hooks and their delete policies, as Argo CD orders them.

-f takes files and directories (read recursively: *.yaml, *.yml, *.json),
repeatable, "-" for stdin. No cluster is contacted: nothing is pruned and
every object counts as out of sync. --namespace is the destination
namespace, given to objects without one unless their kind is
cluster-scoped (a built-in one, or one whose CustomResourceDefinition is
among the manifests with scope: Cluster); --sync-option adds application
sync options (CreateNamespace=true, PruneLast=true, ...). PreDelete and
PostDelete hooks run when an application is deleted, not in a sync, and are
not listed.

Prints a table (-o text) or one JSON array of the tasks in execution order
(-o json). An object with a bad sync annotation or that cannot be read is
reported on stderr, one line each, with no plan and exit code 1; a usage
error exits 2.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runAdminSyncPlan(c, o) },
	}
	f := c.Flags()
	f.StringArrayVarP(&o.files, "file", "f", nil, "manifest file or directory (repeatable, - for stdin)")
	f.StringVar(&o.namespace, "namespace", "", "destination namespace for objects without one")
	f.StringArrayVar(&o.syncOptions, "sync-option", nil, "application sync option Name=value (repeatable)")
	f.VarP(o.output, "output", "o", "output format: text, json")
	return c
}

// syncPlanTask is one element of `admin sync-plan -o json`.
type syncPlanTask struct {
	Phase            string   `json:"phase"`
	Wave             int      `json:"wave"`
	Group            string   `json:"group"`
	Version          string   `json:"version"`
	Kind             string   `json:"kind"`
	Namespace        string   `json:"namespace"`
	Name             string   `json:"name"`
	GenerateName     string   `json:"generateName,omitempty"`
	HookType         string   `json:"hookType"`
	DeletePolicies   []string `json:"deletePolicies"`
	Prune            bool     `json:"prune"`
	PruneLast        bool     `json:"pruneLast,omitempty"`
	CreatesNamespace bool     `json:"createsNamespace,omitempty"`
	SyncOptions      []string `json:"syncOptions,omitempty"`
}

func runAdminSyncPlan(c *cobra.Command, o *adminSyncPlanOptions) error {
	if len(o.files) == 0 {
		return &command.UsageError{Cmd: c, Err: errors.New("flag -f/--file is required")}
	}
	desired, problems, err := readManifests(c, o.files)
	if err != nil {
		return command.ExitCodeError{Code: command.ExitUsage, Err: err}
	}
	app, err := sync.ParseSyncOptions(o.syncOptions)
	if err != nil {
		return &command.UsageError{Cmd: c, Err: fmt.Errorf("--sync-option: %w", err)}
	}
	plan, err := sync.Build(desired, nil, sync.Options{
		Namespace: o.namespace, SyncOptions: o.syncOptions, ClusterScoped: sync.OfflineScope(desired, nil),
	})
	if err != nil {
		return err
	}
	for _, e := range plan.Errors {
		problems = append(problems, e.Error())
	}
	stderr := c.ErrOrStderr()
	for _, w := range plan.Warnings {
		_, _ = fmt.Fprintf(stderr, "graphcd: warning: %s\n", command.OneLine(w.Error()))
	}
	if len(problems) > 0 {
		for _, p := range problems {
			_, _ = fmt.Fprintf(stderr, "graphcd: %s\n", command.OneLine(p))
		}
		return command.ExitCodeError{Code: command.ExitError, Err: fmt.Errorf("%d problem(s) in the manifests, no plan", len(problems))}
	}
	tasks := slices.Concat(plan.Tasks, plan.SyncFail)
	if o.output.String() == "json" {
		return printSyncPlanJSON(c, tasks, app)
	}
	w := command.NewTable(c.OutOrStdout(), "PHASE", "WAVE", "KIND", "NAMESPACE", "NAME", "HOOK", "DELETE-POLICY")
	for _, t := range tasks {
		kind := t.Kind
		if t.Group != "" {
			kind += "." + t.Group
		}
		name := t.Name
		if name == "" {
			name = t.GenerateName + "*"
		}
		w.Row(string(t.Phase), strconv.Itoa(t.Wave), kind, t.Namespace, name, string(t.HookType), strings.Join(policyNames(t.DeletePolicies), ","))
	}
	return w.Flush()
}

// printSyncPlanJSON prints the tasks as one JSON array; syncOptions are
// what each object's annotation changed from the application's options.
func printSyncPlanJSON(c *cobra.Command, tasks []sync.Task, app sync.SyncOptions) error {
	out := make([]syncPlanTask, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, syncPlanTask{
			Phase: string(t.Phase), Wave: t.Wave, Group: t.Group, Version: t.Version, Kind: t.Kind,
			Namespace: t.Namespace, Name: t.Name, GenerateName: t.GenerateName,
			HookType: string(t.HookType), DeletePolicies: policyNames(t.DeletePolicies),
			Prune: t.Prune, PruneLast: t.PruneLast, CreatesNamespace: t.CreatesNamespace,
			SyncOptions: t.SyncOptions.Changed(app),
		})
	}
	enc := json.NewEncoder(c.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func policyNames(policies []sync.DeletePolicy) []string {
	names := make([]string, len(policies))
	for i, p := range policies {
		names[i] = string(p)
	}
	return names
}

// readManifests reads the objects of every path, a directory meaning its
// *.yaml, *.yml and *.json files in lexical order (hidden directories
// skipped). A path that cannot be read is an error; a document that
// cannot be decoded is a problem, reported with the others.
func readManifests(c *cobra.Command, paths []string) (objs []*unstructured.Unstructured, problems []string, err error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if p == "-" || (err == nil && !st.IsDir()) {
			files = append(files, p)
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", p, errors.Unwrap(err))
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && path != p && strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir
			case !d.IsDir() && isManifestFile(d.Name()):
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", p, err)
		}
	}
	for _, f := range files {
		data, err := command.ReadInput(c, f)
		if err != nil {
			return nil, nil, err
		}
		for _, doc := range splitDocuments(f, data) {
			if doc.err != nil {
				problems = append(problems, doc.err.Error())
				continue
			}
			objs = append(objs, doc.objs...)
		}
	}
	return objs, problems, nil
}

func isManifestFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}
