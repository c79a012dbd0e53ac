package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/steps/webui"
)

func (a *app) serveCmd() *cobra.Command {
	var addr, token, tokenFile, registry string
	cmd := &cobra.Command{
		Use:   "serve [DIR...]",
		Short: "A read-only web UI over campaign directories: live node states, points, comparisons",
		Long: `Serve shows campaign directories in a browser: the campaigns with their status and verdict,
each campaign's nodes with their state, timing, reuse reason and gate verdicts — updated live
while a run writes the directory — every measured point's numbers, TTFT and ITL distributions
and request timeline as charts whose tooltips give exact values, the 'baseline diff' table of
two campaigns side by side or of one against a registered baseline, and links to the PDF, the
atlas, SOURCE.md and the lake receipt.

A DIR is a campaign directory or a folder holding them (default: campaigns). The directories
are the truth: serve only reads them, through the same contract as 'perfdag status', and shows
only outputs a finished step recorded (checked against the journal's digests, so a file being
written is never shown torn). Live updates follow events.jsonl through file notifications; a
watching browser costs the running campaign nothing.

Serve binds 127.0.0.1:8080 and answers loopback host names only. Any other address needs
--token or --token-file (at least 16 characters once trimmed of spaces): requests without the
token are refused; open the address once with ?token=TOKEN (a cookie keeps it) or send
Authorization: Bearer TOKEN. Without a token on a non-loopback address serve refuses to start
(exit 2). API keys and DSN passwords are never served.`,
		Example: `  perfdag serve                                  # campaigns/ on http://127.0.0.1:8080/
  perfdag serve campaigns/20261202T130455Z-quickstart --addr 127.0.0.1:9000
  perfdag serve /data/campaigns --addr 0.0.0.0:8080 --token-file ~/.perfdag-token`,
		Args: usageArgs(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"campaigns"}
			}
			for _, d := range args {
				if st, err := os.Stat(d); err != nil || !st.IsDir() {
					return exitf(ExitUsage, "%s is not a directory (give campaign directories or folders holding them)", d)
				}
			}
			if tokenFile != "" {
				if cmd.Flags().Changed("token") {
					return exitf(ExitUsage, "give --token or --token-file, not both")
				}
				b, err := os.ReadFile(tokenFile)
				if err != nil {
					return exit(ExitUsage, fmt.Errorf("read --token-file: %w", err))
				}
				if token, err = webui.CheckToken("--token-file "+tokenFile, string(b)); err != nil {
					return exit(ExitUsage, err)
				}
			} else if cmd.Flags().Changed("token") {
				var err error
				if token, err = webui.CheckToken("--token", token); err != nil {
					return exit(ExitUsage, err)
				}
			}
			if _, _, err := net.SplitHostPort(addr); err != nil {
				var ae *net.AddrError
				why, host := err.Error(), "127.0.0.1"
				if errors.As(err, &ae) {
					why = ae.Err
				}
				if h := strings.Trim(addr, "[]"); h != "" && (strings.Contains(why, "missing port") || net.ParseIP(h) != nil) {
					host = h // the example keeps the host given
				}
				return exitf(ExitUsage, "--addr %s: %s; give HOST:PORT, e.g. --addr %s (or port 0 for any free one)", addr, why, net.JoinHostPort(host, "8080"))
			}
			if !webui.Loopback(addr) && token == "" {
				return exitf(ExitUsage, "--addr %s is not a loopback address: give --token or --token-file so only people with the token can read the campaigns", addr)
			}
			svc, err := a.service()
			if err != nil {
				return err
			}
			srv, err := webui.New(webui.Options{Roots: args, Service: svc, Token: token, Registry: registry})
			if err != nil {
				return err
			}
			defer srv.Close()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return exit(ExitUsage, fmt.Errorf("listen on %s: %w", addr, err))
			}
			fmt.Fprintf(a.stdout, "serving %s on http://%s/\n", strings.Join(args, ", "), ln.Addr())
			if token != "" { // the token itself is never printed: perfdag writes no secret anywhere
				fmt.Fprintln(a.stdout, "every request needs the token: open the address once with the query parameter token set to it (a cookie keeps it), or send it in the Authorization header (scheme Bearer)")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
			go func() {
				<-ctx.Done()
				_ = srv.Close() // ends the live streams, so Shutdown does not wait on them
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = hs.Shutdown(sctx)
			}()
			if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on (not loopback: needs --token or --token-file)")
	cmd.Flags().StringVar(&token, "token", "", "require this token of every request, at least 16 characters (visible in ps; prefer --token-file)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "read the required token from this file (trimmed; at least 16 characters)")
	cmd.Flags().StringVar(&registry, "registry", "baselines", "baseline registry folder, for the comparison with a named baseline")
	return cmd
}
