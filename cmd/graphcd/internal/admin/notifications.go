package admin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/controller/notifications"
)

// notificationsOptions are the flags the notifications commands share.
type notificationsOptions struct {
	config, secret, app string
	output              *command.Enum
}

func (o *notificationsOptions) add(c *cobra.Command, withApp bool) {
	f := c.Flags()
	f.StringVar(&o.config, "config", "", "the notifications ConfigMap (graphcd-notifications-cm or Argo CD's argocd-notifications-cm) as YAML; empty: the built-in catalog only")
	f.StringVar(&o.secret, "secret", "", "the notifications Secret as YAML, for the $key references of services")
	if withApp {
		f.StringVarP(&o.app, "file", "f", "", "the Application as YAML or JSON (- for stdin)")
		_ = c.MarkFlagRequired("file")
	}
	f.VarP(o.output, "output", "o", "output format: "+strings.Join(o.output.Allowed(), ", "))
}

func newNotificationsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "notifications",
		Short: "Try notification triggers and templates on an Application file, as the controller evaluates them",
		Args:  command.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	trigger := &cobra.Command{Use: "trigger", Short: "List and run triggers", Args: command.NoArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	trigger.AddCommand(newTriggerGetCmd(), newTriggerRunCmd())
	template := &cobra.Command{Use: "template", Short: "List templates and render (or send) them", Args: command.NoArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	template.AddCommand(newTemplateGetCmd(), newTemplateNotifyCmd())
	c.AddCommand(trigger, template)
	return c
}

// load parses --config and --secret.
func (o *notificationsOptions) load(c *cobra.Command) (*notifications.Config, error) {
	var cm corev1.ConfigMap
	if err := readManifest(c, o.config, "ConfigMap", &cm, &cm.TypeMeta); err != nil {
		return nil, err
	}
	var sec corev1.Secret
	if err := readManifest(c, o.secret, "Secret", &sec, &sec.TypeMeta); err != nil {
		return nil, err
	}
	data, secret := cm.Data, sec.Data
	for k, v := range sec.StringData {
		if secret == nil {
			secret = map[string][]byte{}
		}
		secret[k] = []byte(v)
	}
	cfg, err := notifications.Parse(data, secret)
	if err != nil {
		return nil, command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%s: %w", o.config, err)}
	}
	for _, w := range cfg.Warnings() {
		if _, err := fmt.Fprintf(c.ErrOrStderr(), "warning: %s: %s\n", o.config, w); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// readManifest reads the manifest at path ("" reads nothing) into obj,
// whose TypeMeta is meta, and checks its kind. The error never quotes
// the file: a Secret's would show its values.
func readManifest(c *cobra.Command, path, kind string, obj any, meta *metav1.TypeMeta) error {
	if path == "" {
		return nil
	}
	b, err := command.ReadInput(c, path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, obj); err != nil || meta.Kind != kind {
		return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%s: not a %s manifest", path, kind)}
	}
	return nil
}

// readApp reads -f as a JSON object.
func (o *notificationsOptions) readApp(c *cobra.Command) (map[string]any, error) {
	b, err := command.ReadInput(c, o.app)
	if err != nil {
		return nil, err
	}
	var app map[string]any
	if err := yaml.Unmarshal(b, &app); err != nil {
		return nil, command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%s: %w", o.app, err)}
	}
	if kind, _ := app["kind"].(string); kind != "Application" {
		return nil, command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%s: not an Application (kind %q)", o.app, kind)}
	}
	return app, nil
}

func newTriggerGetCmd() *cobra.Command {
	o := &notificationsOptions{output: command.NewEnum("table", "table", "json", "yaml")}
	c := &cobra.Command{
		Use:   "get [TRIGGER]",
		Short: "List the triggers (the built-in catalog's and --config's)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := o.load(c)
			if err != nil {
				return err
			}
			type row struct {
				Name         string   `json:"name"`
				Descriptions []string `json:"descriptions"`
			}
			var rows []row
			for _, name := range cfg.TriggerNames() {
				if len(args) == 1 && args[0] != name {
					continue
				}
				rows = append(rows, row{Name: name, Descriptions: cfg.Trigger(name).Descriptions()})
			}
			if len(args) == 1 && len(rows) == 0 {
				return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("trigger %q is not defined", args[0])}
			}
			if o.output.String() != "table" {
				return writeStructured(c.OutOrStdout(), o.output.String(), rows)
			}
			t := command.NewTable(c.OutOrStdout(), "NAME", "DESCRIPTION")
			for _, r := range rows {
				t.Row(r.Name, strings.Join(r.Descriptions, "; "))
			}
			return t.Flush()
		},
	}
	o.add(c, false)
	return c
}

func newTriggerRunCmd() *cobra.Command {
	o := &notificationsOptions{output: command.NewEnum("json", "json", "yaml")}
	c := &cobra.Command{
		Use:   "run TRIGGER -f APP.yaml",
		Short: "Evaluate a trigger on an Application file: which conditions hold and which templates they send",
		Long: `Evaluate TRIGGER on the Application in -f, as the controller does, and
print each condition's result: key, triggered, oncePer (the value a
notification is sent once for), templates, and an error when the
condition could not be evaluated (a field the app lacks), in which case
it does not hold.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := o.load(c)
			if err != nil {
				return err
			}
			app, err := o.readApp(c)
			if err != nil {
				return err
			}
			t := cfg.Trigger(args[0])
			if t == nil {
				return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("trigger %q is not defined; these are: %s", args[0], strings.Join(cfg.TriggerNames(), ", "))}
			}
			return writeStructured(c.OutOrStdout(), o.output.String(), t.Run(app))
		},
	}
	o.add(c, true)
	return c
}

func newTemplateGetCmd() *cobra.Command {
	o := &notificationsOptions{output: command.NewEnum("table", "table", "json", "yaml")}
	c := &cobra.Command{
		Use:   "get",
		Short: "List the templates (the built-in catalog's and --config's)",
		Args:  command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := o.load(c)
			if err != nil {
				return err
			}
			if o.output.String() != "table" {
				return writeStructured(c.OutOrStdout(), o.output.String(), cfg.TemplateNames())
			}
			t := command.NewTable(c.OutOrStdout(), "NAME")
			for _, n := range cfg.TemplateNames() {
				t.Row(n)
			}
			return t.Flush()
		},
	}
	o.add(c, false)
	return c
}

// rendered is one destination's notification, as template notify prints it.
type rendered struct {
	Service      string                 `json:"service"`
	ServiceType  string                 `json:"serviceType"`
	Recipient    string                 `json:"recipient"`
	Notification *services.Notification `json:"notification"`
	Sent         bool                   `json:"sent"`
}

func newTemplateNotifyCmd() *cobra.Command {
	o := &notificationsOptions{output: command.NewEnum("json", "json", "yaml")}
	var recipients []string
	var dryRun bool
	c := &cobra.Command{
		Use:   "notify TEMPLATE -f APP.yaml --recipient SERVICE:RECIPIENT",
		Short: "Render a template for an Application file and send it (or, with --dry-run, only print it)",
		Long: `Render TEMPLATE for the Application in -f once per --recipient
(SERVICE:RECIPIENT, the service as --config names it: slack, or github
for service.webhook.github) and send it through the service, with the
credentials of --secret. With --dry-run nothing is sent: each rendered
notification is printed, its message and every service-specific part.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(recipients) == 0 {
				return command.ExitCodeError{Code: command.ExitUsage, Err: errors.New("--recipient is required")}
			}
			cfg, err := o.load(c)
			if err != nil {
				return err
			}
			app, err := o.readApp(c)
			if err != nil {
				return err
			}
			var out []rendered
			for _, r := range recipients {
				service, to, _ := strings.Cut(r, ":")
				dest := services.Destination{Service: service, Recipient: to}
				n, err := cfg.Render(app, dest, args[0])
				if err != nil {
					return err
				}
				one := rendered{Service: service, ServiceType: cfg.ServiceType(service), Recipient: to, Notification: n}
				if !dryRun {
					sender, err := cfg.Sender(service)
					if err != nil {
						return err
					}
					if err := sender.Send(*n, dest); err != nil {
						return fmt.Errorf("send to %s: %s", r, cfg.Redact(err.Error()))
					}
					one.Sent = true
				}
				out = append(out, one)
			}
			return writeStructured(c.OutOrStdout(), o.output.String(), out)
		},
	}
	o.add(c, true)
	c.Flags().StringArrayVar(&recipients, "recipient", nil, "SERVICE:RECIPIENT to render for (repeatable)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "print the rendered notifications without sending them")
	return c
}
