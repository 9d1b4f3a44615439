package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/internal/version"
)

func newVersionCmd(o *rootOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the graphcd version",
		Args:  command.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(o.stdout, version.String())
			return err
		},
	}
}
