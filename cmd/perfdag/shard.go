package main

import (
	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/steps/measure/shard"
)

// shardCmd is the child run-shape starts for each client of a point split over clients:
// it speaks the shard protocol on stdin and stdout (steps/measure/shard), never by hand.
func (a *app) shardCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "shard",
		Short:  "One client of a point split over clients (started by run-shape; not for use by hand)",
		Hidden: true,
		Args:   usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return shard.Serve(cmd.Context(), a.stdin, a.stdout)
		},
	}
}
