package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps"
)

func (a *app) schemaCmd() *cobra.Command {
	var keys, markdown bool
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Print the campaign file's JSON Schema (generated from the Go types)",
		Long: `Schema prints the JSON Schema of campaign files, generated from the same Go types the
loader decodes into, so it cannot drift. Point your editor at it for completion:

  # yaml-language-server: $schema=../schema/campaign.schema.json

With --keys, it prints every key with its type and meaning instead.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if keys && markdown {
				_, err := io.WriteString(a.stdout, keysMarkdown())
				return err
			}
			if keys {
				tw := tabwriter.NewWriter(a.stdout, 2, 4, 2, ' ', 0)
				for _, f := range schema.Fields() {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Path, f.Type, f.Doc)
				}
				return tw.Flush()
			}
			b, err := steps.JSONSchema()
			if err != nil {
				return err
			}
			_, err = a.stdout.Write(b)
			return err
		},
	}
	cmd.Flags().BoolVar(&keys, "keys", false, "list every key with its type and documentation")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "with --keys: a Markdown table (the key reference of docs/campaign-file.md)")
	return cmd
}

// keysMarkdown is docs/campaign-file.md's key reference, generated from the schema types.
func keysMarkdown() string {
	var b strings.Builder
	b.WriteString("| key | type | meaning |\n| --- | --- | --- |\n")
	for _, f := range schema.Fields() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Path, f.Type, strings.ReplaceAll(f.Doc, "|", "\\|"))
	}
	return b.String()
}

func (a *app) kindsCmd() *cobra.Command {
	var markdown, params bool
	cmd := &cobra.Command{
		Use:   "kinds",
		Short: "List the step kinds a pipeline can use",
		Long: `Kinds lists every step kind this build registers: its name (what kind: takes), the
scope it expands over (campaign, cell or point), whether it holds the endpoint (such steps run
one at a time per endpoint), its version (part of every fingerprint) and what it does.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := a.registry()
			if err != nil {
				return err
			}
			if params && markdown {
				_, err := io.WriteString(a.stdout, paramsMarkdown(reg))
				return err
			}
			if markdown {
				_, err := io.WriteString(a.stdout, kindsMarkdown(reg))
				return err
			}
			tw := tabwriter.NewWriter(a.stdout, 2, 4, 2, ' ', 0)
			if params {
				fmt.Fprintln(tw, "KIND\tWITH KEY\tTYPE\tMEANING")
				for _, r := range paramRows(reg) {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.kind, r.Path, r.Type, r.Doc)
				}
				return tw.Flush()
			}
			fmt.Fprintln(tw, "KIND\tSCOPE\tENDPOINT\tVERSION\tDOES")
			for _, n := range reg.Names() {
				k, _ := reg.Lookup(n)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.Name, k.Scope, holds(k), k.Version, k.Doc)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "a Markdown table (the kinds table of docs/pipeline.md)")
	cmd.Flags().BoolVar(&params, "params", false, "list every kind's with: keys with their type and meaning instead")
	return cmd
}

// paramRow is one `with:` key of a kind.
type paramRow struct {
	kind string
	schema.Field
}

// paramRows lists every `with:` key of every kind that takes parameters, from their types.
func paramRows(reg *engine.Registry) []paramRow {
	var out []paramRow
	for _, n := range reg.Names() {
		k, _ := reg.Lookup(n)
		if k.Params == nil {
			continue
		}
		for _, f := range schema.FieldsOf(k.Params()) {
			out = append(out, paramRow{kind: k.Name, Field: f})
		}
	}
	return out
}

// paramsMarkdown is docs/pipeline.md's table of with: keys, generated from the kinds' types.
func paramsMarkdown(reg *engine.Registry) string {
	var b strings.Builder
	b.WriteString("| kind | `with:` key | type | meaning |\n| --- | --- | --- | --- |\n")
	for _, r := range paramRows(reg) {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", r.kind, r.Path, r.Type, strings.ReplaceAll(r.Doc, "|", "\\|"))
	}
	return b.String()
}

func holds(k engine.Kind) string {
	if k.HoldsEndpoint {
		return "holds"
	}
	return "-"
}

// kindsMarkdown is docs/pipeline.md's kinds table, generated from the registry.
func kindsMarkdown(reg *engine.Registry) string {
	var b strings.Builder
	b.WriteString("| kind | scope | endpoint | does |\n| --- | --- | --- | --- |\n")
	for _, n := range reg.Names() {
		k, _ := reg.Lookup(n)
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Name, k.Scope, holds(k), strings.ReplaceAll(k.Doc, "|", "\\|"))
	}
	return b.String()
}
