package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

func newClusterGetCmd(o *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "get SERVER|NAME",
		Short: "Show a destination cluster with its version, connection state and cache, as the controller sees them",
		Long: `Show a destination cluster: its settings, and what the application
controller shard that owns it last published (every 10 seconds): the
cluster's Kubernetes version, its connection state (Successful, Failed
with the error, or Unknown while no application uses it), what the
controller's cache holds and how many applications it reconciles there.`,
		Example: `  graphcd cluster get in-cluster
  graphcd cluster get https://edge.example.com:6443 -o yaml`,
		Args: cliArgs(1, "SERVER|NAME"),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			all, err := allPages(func(after *string) ([]client.ClusterDetail, client.PageFields, error) {
				resp, err := client.ListClusterDetails(c.Context(), cl.GraphQL, ListPageSize, after)
				if err != nil {
					return nil, client.PageFields{}, err
				}
				nodes := make([]client.ClusterDetail, 0, len(resp.Clusters.Nodes))
				for _, n := range resp.Clusters.Nodes {
					nodes = append(nodes, n.ClusterDetail)
				}
				return nodes, resp.Clusters.PageInfo.PageFields, nil
			})
			if err != nil {
				return err
			}
			want := strings.TrimRight(args[0], "/")
			for i := range all {
				if strings.TrimRight(all[i].Server, "/") == want || all[i].Name == args[0] {
					return printCluster(c.OutOrStdout(), o.output.String(), &all[i])
				}
			}
			return fmt.Errorf("cluster %q not found (%s)", args[0], client.CodeNotFound)
		}),
	}
}

func printCluster(w io.Writer, format string, cl *client.ClusterDetail) error {
	switch format {
	case "json", "yaml":
		return printStructured(w, format, cl)
	case "name":
		return printNames(w, cl.Server)
	}
	kv := command.NewTable(w, "Server:", cl.Server)
	kv.Row("Name:", cl.Name)
	kv.Row("Project:", orNone(cl.Project))
	kv.Row("Namespaces:", orNone(strings.Join(cl.Namespaces, ",")))
	info := cl.Info
	if info == nil {
		kv.Row("Connection:", "Unknown (no controller has reported the cluster)")
		return kv.Flush()
	}
	kv.Row("Server version:", orNone(info.ServerVersion))
	state := info.ConnectionState
	conn := connectionWord(state.Status)
	if state.Message != "" {
		conn += ": " + state.Message
	}
	kv.Row("Connection:", conn)
	kv.Row("Attempted at:", timeOrNever(state.AttemptedAt))
	kv.Row("Applications:", strconv.Itoa(info.ApplicationsCount))
	kv.Row("Resources cached:", strconv.Itoa(info.CacheInfo.ResourcesCount))
	kv.Row("APIs watched:", strconv.Itoa(info.CacheInfo.ApisCount))
	kv.Row("Last cache sync:", timeOrNever(info.CacheInfo.LastCacheSyncTime))
	kv.Row("Shard:", strconv.Itoa(info.Shard))
	return kv.Flush()
}

// connectionWord is a connection status as Argo CD writes it.
func connectionWord(s client.ClusterConnectionStatus) string {
	switch s {
	case client.ClusterConnectionStatusSuccessful:
		return "Successful"
	case client.ClusterConnectionStatusFailed:
		return "Failed"
	}
	return "Unknown"
}

func timeOrNever(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.Format(time.RFC3339)
}
