package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// logsOptions are the flags of app logs.
type logsOptions struct {
	pod, namespace, container string
	tail                      int
	follow                    bool
}

func newAppLogsCmd(o *appOptions) *cobra.Command {
	var l logsOptions
	c := &cobra.Command{
		Use:   "logs NAME --pod POD",
		Short: "Print the log of a Pod of an application; --follow keeps printing new lines",
		Long: `Print the last lines of the log of a Pod in an application's resource
tree (NOT_FOUND for any other Pod). The Pod's namespace is the
application's destination namespace unless --namespace says otherwise.
With --follow the lines come over the API's websocket as the container
writes them, until interrupted or the log ends.`,
		Example: `  graphcd app logs guestbook --pod guestbook-ui-7d4b9c-x2k8p --tail 20
  graphcd app logs guestbook --pod guestbook-ui-7d4b9c-x2k8p --container ui --follow`,
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			if l.pod == "" {
				return &command.UsageError{Cmd: c, Err: errors.New("give the Pod with --pod POD (see graphcd app resources NAME)")}
			}
			if l.tail < 0 || l.tail > 10000 {
				return &command.UsageError{Cmd: c, Err: fmt.Errorf("--tail %d: want 0 to 10000", l.tail)}
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			name := args[0]
			if l.namespace == "" {
				resp, err := client.AppDestinationNamespace(c.Context(), cl.GraphQL, o.name(name), o.nsOf(name))
				if err != nil {
					return err
				}
				if resp.Application == nil {
					return notFound(name)
				}
				l.namespace = resp.Application.Spec.Destination.Namespace
			}
			if l.follow {
				return followLogs(c, o, cl, name, &l)
			}
			if l.tail == 0 {
				return nil // the query's tailLines starts at 1: nothing asked for
			}
			resp, err := client.PodLogs(c.Context(), cl.GraphQL, o.name(name), o.nsOf(name), l.namespace, l.pod, optional(l.container), l.tail)
			if err != nil {
				return err
			}
			if resp.Application == nil {
				return notFound(name)
			}
			lines := resp.Application.PodLogs
			w := c.OutOrStdout()
			if f := o.output.String(); f == "json" || f == "yaml" {
				if lines == nil {
					lines = []string{}
				}
				return printStructured(w, f, lines)
			}
			for _, line := range lines {
				if err := printLogLine(w, line); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	f := c.Flags()
	f.StringVar(&l.pod, "pod", "", "the Pod's name")
	f.StringVarP(&l.namespace, "namespace", "n", "", "the Pod's namespace; the application's destination namespace when empty")
	f.StringVarP(&l.container, "container", "c", "", "the container; the only one when empty")
	f.IntVar(&l.tail, "tail", 100, "how many lines from the end, 0 to 10000")
	f.BoolVarP(&l.follow, "follow", "f", false, "keep printing lines as they are written")
	return c
}

// followLogs prints the log over the podLogs subscription until the
// server ends it or the command is interrupted.
func followLogs(c *cobra.Command, o *appOptions, cl *client.Client, name string, l *logsOptions) error {
	sub, err := cl.FollowPodLogs(c.Context(), o.ref(name), l.namespace, l.pod, optional(l.container), l.tail)
	if err != nil {
		return err
	}
	defer sub.Close()
	w := c.OutOrStdout()
	for {
		r, err := sub.Next()
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, context.Canceled):
			return nil
		case err != nil:
			return err
		}
		if err := printLogLine(w, r.PodLogs); err != nil {
			return err
		}
	}
}

func printLogLine(w io.Writer, line string) error {
	_, err := fmt.Fprintln(w, strings.TrimRight(line, "\r\n"))
	return err
}
