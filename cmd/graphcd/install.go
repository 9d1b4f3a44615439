package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/config/crd"
)

func newInstallCmd(root *rootOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "install",
		Short: "Install graphcd components into the cluster",
		Args:  noArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newInstallCRDsCmd(root))
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
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runInstallCRDs(c.Context(), c, root, o)
		},
	}
	c.Flags().DurationVar(&o.timeout, "timeout", 60*time.Second, "how long to wait for the CRDs to be established")
	return c
}

func runInstallCRDs(ctx context.Context, c *cobra.Command, root *rootOptions, o *installCRDsOptions) error {
	if o.timeout <= 0 {
		return fmt.Errorf("%s: must be positive, got %s", flagOrigin(c, "timeout"), o.timeout)
	}
	k, err := connectKube(ctx, kubeOptions{kubeconfig: root.kubeconfig, origin: flagOrigin(c, "kubeconfig")})
	if err != nil {
		return err
	}
	crds, err := crd.Objects()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := crd.Install(ctx, k.apiext); err != nil {
		return fmt.Errorf("install CRDs into %s: %w", k.host, err)
	}
	for _, obj := range crds {
		if _, err := fmt.Fprintf(root.stdout, "customresourcedefinition/%s established\n", obj.Name); err != nil {
			return err
		}
	}
	return nil
}
