package main

import (
	"fmt"
	"net"
	"os"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/steps/measure/shard"
)

// shardCmd is the client run-shape starts for each client of a point split over clients:
// it speaks the shard protocol on stdin and stdout (steps/measure/shard), never by hand. With
// --listen it is an exported workflow's client pod instead: it serves, one connection at a
// time, the coordinators that prove they hold the token in PERFDAG_SHARD_TOKEN.
func (a *app) shardCmd() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:    "shard",
		Short:  "One client of a point split over clients (started by run-shape or an exported workflow; not for use by hand)",
		Hidden: true,
		Args:   usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listen == "" {
				return shard.Serve(cmd.Context(), a.stdin, a.stdout)
			}
			ctx, stop := interruptible(cmd.Context(), a)
			defer stop()
			return shard.Listen(ctx, listen, os.Getenv(shard.TokenEnv), a.stderr, func(addr net.Addr) {
				fmt.Fprintf(a.stderr, "perfdag shard: listening on %s\n", addr)
			})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "serve coordinators on this TCP address (host:port, :port) instead of stdin; needs "+shard.TokenEnv)
	return cmd
}
