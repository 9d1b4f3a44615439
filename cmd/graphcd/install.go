package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/kubeconn"
	"github.com/graphcd/graphcd/config/crd"
	"github.com/graphcd/graphcd/internal/bootstrap"
)

func newInstallCmd(root *rootOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "install",
		Short: "Install graphcd components into the cluster",
		Args:  command.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newInstallCRDsCmd(root), newInstallSecretsCmd(root))
	return c
}

// installCRDsOptions are the flags of `graphcd install crds`.
type installCRDsOptions struct {
	timeout time.Duration
}

func newInstallCRDsCmd(root *rootOptions) *cobra.Command {
	o := &installCRDsOptions{}
	c := &cobra.Command{
		Use:   "crds",
		Short: "Create or upgrade the graphcd CRDs and wait until they are served",
		Args:  command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runInstallCRDs(c.Context(), c, root, o)
		},
	}
	c.Flags().DurationVar(&o.timeout, "timeout", 60*time.Second, "how long to wait for the CRDs to be established")
	return c
}

func runInstallCRDs(ctx context.Context, c *cobra.Command, root *rootOptions, o *installCRDsOptions) error {
	if o.timeout <= 0 {
		return fmt.Errorf("%s: must be positive, got %s", command.FlagOrigin(c, "timeout"), o.timeout)
	}
	k, err := kubeconn.Connect(ctx, kubeconn.Options{Kubeconfig: root.kubeconfig, Origin: command.FlagOrigin(c, "kubeconfig")})
	if err != nil {
		return err
	}
	crds, err := crd.Objects()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := crd.Install(ctx, k.APIExt); err != nil {
		return fmt.Errorf("install CRDs into %s: %w", k.Host, err)
	}
	for _, obj := range crds {
		if _, err := fmt.Fprintf(root.stdout, "customresourcedefinition/%s established\n", obj.Name); err != nil {
			return err
		}
	}
	return nil
}

// installSecretsOptions are the flags of `graphcd install secrets`.
type installSecretsOptions struct {
	namespace string
	timeout   time.Duration
}

func newInstallSecretsCmd(root *rootOptions) *cobra.Command {
	o := &installSecretsOptions{}
	c := &cobra.Command{
		Use:   "secrets",
		Short: "Create the Secrets a split install needs (Redis password, repo-server TLS) where they do not exist",
		Long: fmt.Sprintf(`Create in --namespace, only where they do not exist yet, the Secrets of a
split (HA) install, with values generated here:

  %-31s Redis password (%s) and the keys that sign
  %-31s shared data (%s, %s)
  %-31s the repo-server's certificate for the Service %s
  %-31s the client certificate of the server and controllers

Both TLS Secrets carry in ca.crt the CA that signed them; its key is not
kept. A Secret that exists is never changed, so running this again changes
nothing. The install manifests run it from the Job graphcd-secret-init.`,
			bootstrap.RedisSecret, bootstrap.RedisPasswordKey, "", bootstrap.RedisSharedKey, bootstrap.RepoCacheKey,
			bootstrap.RepoServerTLSSecret, bootstrap.RepoServerService, bootstrap.RepoServerClientTLSSecret),
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runInstallSecrets(c.Context(), c, root, o)
		},
	}
	c.Flags().StringVar(&o.namespace, "namespace", "graphcd", "namespace to create the Secrets in")
	c.Flags().DurationVar(&o.timeout, "timeout", 60*time.Second, "how long reading and creating the Secrets may take")
	return c
}

func runInstallSecrets(ctx context.Context, c *cobra.Command, root *rootOptions, o *installSecretsOptions) error {
	if o.timeout <= 0 {
		return fmt.Errorf("%s: must be positive, got %s", command.FlagOrigin(c, "timeout"), o.timeout)
	}
	if o.namespace == "" {
		return fmt.Errorf("%s: must not be empty", command.FlagOrigin(c, "namespace"))
	}
	k, err := kubeconn.Connect(ctx, kubeconn.Options{Kubeconfig: root.kubeconfig, Origin: command.FlagOrigin(c, "kubeconfig")})
	if err != nil {
		return err
	}
	kc, err := kubernetes.NewForConfig(k.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	results, err := bootstrap.Ensure(ctx, kc, o.namespace)
	for _, r := range results {
		if r.Created || err == nil {
			if _, perr := fmt.Fprintf(root.stdout, "secret/%s %s\n", r.Name, r.Outcome()); perr != nil {
				return perr
			}
		}
	}
	if err != nil {
		return fmt.Errorf("install secrets into %s: %w", k.Host, err)
	}
	return nil
}
