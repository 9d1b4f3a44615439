package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

func newClusterCmd() *cobra.Command {
	return newAPIGroup("cluster", "Manage destination clusters: list, get, add, rm",
		func(o *apiOptions) []*cobra.Command {
			return []*cobra.Command{newClusterListCmd(o), newClusterGetCmd(o), newClusterAddCmd(o), newClusterRmCmd(o)}
		})
}

func listClusters(c *cobra.Command, o *apiOptions) ([]client.ClusterSummary, error) {
	cl, err := o.connect()
	if err != nil {
		return nil, err
	}
	return allPages(func(after *string) ([]client.ClusterSummary, client.PageFields, error) {
		resp, err := client.ListClusters(c.Context(), cl.GraphQL, ListPageSize, after)
		if err != nil {
			return nil, client.PageFields{}, err
		}
		nodes := make([]client.ClusterSummary, 0, len(resp.Clusters.Nodes))
		for _, n := range resp.Clusters.Nodes {
			nodes = append(nodes, n.ClusterSummary)
		}
		return nodes, resp.Clusters.PageInfo.PageFields, nil
	})
}

func newClusterListCmd(o *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the destination clusters (credentials are never shown)",
		Args:  command.NoArgs,
		RunE: cliRun(func(c *cobra.Command, _ []string) error {
			clusters, err := listClusters(c, o)
			if err != nil {
				return err
			}
			return printClusters(c.OutOrStdout(), o.output.String(), clusters)
		}),
	}
}

func printClusters(w io.Writer, format string, clusters []client.ClusterSummary) error {
	switch format {
	case "json", "yaml":
		if clusters == nil {
			clusters = []client.ClusterSummary{}
		}
		return printStructured(w, format, clusters)
	case "name":
		for _, cl := range clusters {
			if err := printNames(w, cl.Server); err != nil {
				return err
			}
		}
		return nil
	}
	wide := format == "wide"
	headers := []string{"SERVER", "NAME", "NAMESPACES", "PROJECT"}
	if wide {
		headers = append(headers, "CLUSTER RESOURCES", "SHARD", "LABELS")
	}
	t := command.NewTable(w, headers...)
	for _, cl := range clusters {
		ns := strings.Join(cl.Namespaces, ",")
		if ns == "" {
			ns = "<all>"
		}
		row := []string{cl.Server, cl.Name, ns, cl.Project}
		if wide {
			shard := ""
			if cl.Shard != nil {
				shard = strconv.Itoa(*cl.Shard)
			}
			labels := make([]string, 0, len(cl.Labels))
			for _, l := range cl.Labels {
				labels = append(labels, l.Key+"="+l.Value)
			}
			row = append(row, yesNo(cl.ClusterResources), shard, strings.Join(labels, ","))
		}
		t.Row(row...)
	}
	return t.Flush()
}

func newClusterAddCmd(o *apiOptions) *cobra.Command {
	var (
		in                                   client.ClusterInput
		tokenFile, caFile, certFile, keyFile string
		serverName, project                  string
		labels                               []string
	)
	c := &cobra.Command{
		Use:   "add NAME SERVER",
		Short: "Register a destination cluster by its API server URL, with its credentials from files",
		Long: `Register a destination cluster: NAME is what applications give as
spec.destination.name, SERVER the API server's URL. Credentials are read
from files (- for stdin), never from flags: a bearer token (say, a
ServiceAccount's), or a TLS client certificate and key.`,
		Example: `  kubectl -n kube-system create token graphcd --duration 8760h > token
  graphcd cluster add edge https://edge.example.com:6443 --bearer-token-file token --ca-file ca.crt
  graphcd cluster add edge https://edge.example.com:6443 --bearer-token-file token --namespaces web,api --upsert`,
		Args: cliArgs(2, "NAME", "SERVER"),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			in.Name, in.Server = args[0], args[1]
			in.ServerName, in.Project = optional(serverName), optional(project)
			for _, l := range labels {
				k, v, ok := strings.Cut(l, "=")
				if !ok || k == "" {
					return &command.UsageError{Cmd: c, Err: fmt.Errorf("--label %q: want KEY=VALUE", l)}
				}
				in.Labels = append(in.Labels, client.KeyValueInput{Key: k, Value: v})
			}
			for _, f := range []struct {
				path string
				dst  **string
			}{{tokenFile, &in.BearerToken}, {caFile, &in.CaData}, {certFile, &in.CertData}, {keyFile, &in.KeyData}} {
				if f.path == "" {
					continue
				}
				v, err := readSecretFile(c, f.path)
				if err != nil {
					return err
				}
				*f.dst = &v
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			resp, err := client.AddCluster(c.Context(), cl.GraphQL, in)
			if err != nil {
				return err
			}
			added := &resp.AddCluster.ClusterSummary
			if format := o.output.String(); format == "json" || format == "yaml" {
				return printStructured(c.OutOrStdout(), format, added)
			}
			return printDone(c.OutOrStdout(), o.output.String(), added.Server, fmt.Sprintf("cluster %q (%s) added", added.Name, added.Server))
		}),
	}
	f := c.Flags()
	f.StringVar(&tokenFile, "bearer-token-file", "", "a file with the bearer token; - for stdin")
	f.StringVar(&caFile, "ca-file", "", "a file with the CA certificate (PEM) the server's certificate must chain to")
	f.StringVar(&certFile, "cert-file", "", "a file with a TLS client certificate (PEM)")
	f.StringVar(&keyFile, "key-file", "", "a file with the TLS client key (PEM)")
	f.BoolVar(&in.Insecure, "insecure-skip-tls-verify", false, "do not verify the cluster's TLS certificate (--insecure is about the graphcd server)")
	f.StringVar(&serverName, "server-name", "", "the name to verify in the server's certificate")
	f.StringSliceVar(&in.Namespaces, "namespaces", nil, "manage only these namespaces (comma-separated); all when empty")
	f.BoolVar(&in.ClusterResources, "cluster-resources", false, "with --namespaces, manage cluster-scoped resources too")
	f.StringVar(&project, "project", "", "the only project that may use the cluster")
	f.StringArrayVar(&labels, "label", nil, "a label for cluster selection, KEY=VALUE (repeatable)")
	f.BoolVar(&in.Upsert, "upsert", false, "replace an existing registration of the same server")
	return c
}

func newClusterRmCmd(o *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "rm SERVER",
		Aliases: []string{"remove"},
		Short:   "Unregister the cluster at SERVER (its API server URL)",
		Args:    cliArgs(1, "SERVER"),
		ValidArgsFunction: func(c *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			clusters, err := listClusters(c, o)
			if err != nil {
				return nil, cobra.ShellCompDirectiveError
			}
			servers := make([]string, 0, len(clusters))
			for _, cl := range clusters {
				servers = append(servers, cl.Server)
			}
			return servers, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			if _, err := client.RemoveCluster(c.Context(), cl.GraphQL, args[0]); err != nil {
				return err
			}
			return printDone(c.OutOrStdout(), o.output.String(), args[0], fmt.Sprintf("cluster %s removed", args[0]))
		}),
	}
}
