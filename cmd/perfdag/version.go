package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// buildInfo is what `perfdag version` reports: the version (the -ldflags one `make build`
// sets, else the module's, else the VCS revision), the Go toolchain and, when the binary was
// built from a checkout, the revision, its time and whether the tree had local changes.
type buildInfo struct {
	Version  string `json:"version"`
	Module   string `json:"module,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
	Revision string `json:"vcs_revision,omitempty"`
	Time     string `json:"vcs_time,omitempty"`
	Modified *bool  `json:"vcs_modified,omitempty"`
}

// readBuildInfo reads the binary's build information (runtime/debug.ReadBuildInfo); ldflags
// is the version -ldflags set ("dev" when none did).
func readBuildInfo(ldflags string) buildInfo {
	b := buildInfo{Version: ldflags, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Go = bi.GoVersion
	b.Module = bi.Main.Path
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			m := s.Value == "true"
			b.Modified = &m
		}
	}
	if b.Version == "dev" || b.Version == "" {
		switch {
		case bi.Main.Version != "" && bi.Main.Version != "(devel)":
			b.Version = bi.Main.Version
		case b.Revision != "":
			b.Version = "dev-" + short(b.Revision)
			if b.Modified != nil && *b.Modified {
				b.Version += "-dirty"
			}
		}
	}
	return b
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// text is the human form: the version line, then one line per known fact.
func (b buildInfo) text() string {
	var s strings.Builder
	fmt.Fprintf(&s, "perfdag %s\n", b.Version)
	if b.Module != "" {
		fmt.Fprintf(&s, "  module    %s\n", b.Module)
	}
	fmt.Fprintf(&s, "  go        %s %s\n", b.Go, b.Platform)
	if b.Revision != "" {
		rev := b.Revision
		if b.Modified != nil && *b.Modified {
			rev += " (modified)"
		}
		fmt.Fprintf(&s, "  revision  %s\n", rev)
	}
	if b.Time != "" {
		fmt.Fprintf(&s, "  time      %s\n", b.Time)
	}
	return s.String()
}

func (a *app) versionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print perfdag's version, Go toolchain and source revision",
		Long: `Version prints what this perfdag binary is: its version (set by 'make build', else the
module version, else the source revision), the Go toolchain that built it, and — when it was
built from a git checkout — the revision, its commit time and whether the tree had local
changes. 'perfdag --version' prints the same. With --json, one JSON object.`,
		Example: `  perfdag version
  perfdag version --json | jq -r .vcs_revision`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			b := readBuildInfo(version)
			if asJSON {
				return writeJSON(a.stdout, b)
			}
			_, err := io.WriteString(a.stdout, b.text())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build information as JSON")
	return cmd
}
