package main

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine/argo"
)

func (a *app) exportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export a campaign for another engine (argo)",
	}
	cmd.AddCommand(a.exportArgoCmd())
	return cmd
}

// maxRetries bounds --retries (Argo sets none).
const maxRetries = 100

func (a *app) exportArgoCmd() *cobra.Command {
	var o argo.Options
	cmd := &cobra.Command{
		Use:   "argo FILE",
		Short: "Print the campaign as an Argo Workflow (a CronWorkflow when it has a schedule:)",
		Long: `Export argo compiles the campaign and prints an Argo Workflows manifest. Each DAG task
runs perfdag in the image on one slice of the plan — all nodes of one cell, or one
campaign-scope node — with 'perfdag run FILE --out /campaigns/<workflow> --slice
--only-list ...' on a shared volume, so a retried task resumes from its checkpoints like a
local run. Slices of different cells run at the same time (each writes its own journal);
campaign-scope slices take the directory whole and hold its mutex. Tasks that load an
endpoint hold that endpoint's mutex, named from its address, so two workflows never
benchmark one server at once. A cell with clients: N becomes a DAG holding that mutex: N
client pods (perfdag shard --listen :7070, started together) and the run task driving them at
their pod addresses, all holding the Secret's PERFDAG_SHARD_TOKEN. Pods run as the image's user 65532 (fsGroup 65532). API keys
come from a Secret (one key per api_key_env, and per step token variable such as
dcgm-correlate's bearer_token_env); a campaign publishing to PostgreSQL reads PGPASSWORD from
it too. The campaign file travels to the pods inside the manifest, where every credential
would be masked: a file holding one outside its comments (a URL's user:password@, an
api_key= or token= query, a DSN's password) is refused with exit 3 at its key's line:col,
saying where the credential goes instead. A campaign with schedule: becomes a
CronWorkflow: cron → schedules, timezone → timezone, overlap skip/queue/replace →
concurrencyPolicy Forbid/Allow/Replace, catchup_window → startingDeadlineSeconds. Argo has
no queue policy: overlap queue becomes Allow (a due run starts at once; its load waits on
the endpoint mutexes, and the two runs' tasks interleave). What the CronWorkflow cannot do
as 'perfdag schedule' would (queue, catchup_max above 1, baseline diffs and on_red) is
printed as a warning on stderr and kept in the manifest as comments and the annotation
perfdag.dev/export-caveats.`,
		Example: `  perfdag export argo pipelines/quickstart.yaml --image registry.example.com/perfdag:v1 > wf.yaml
  argo submit -n bench wf.yaml --watch`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, p, err := a.compile(args[0], nil, "")
			if err != nil {
				return a.invalid(err, args[0], c)
			}
			o.Source = sourceOf(c, args[0])
			o.CampaignFile = filepath.Base(args[0])
			b, err := argo.Export(p, o)
			if err != nil {
				return a.invalid(exit(ExitInvalid, err), args[0], c)
			}
			for _, c := range argo.Caveats(p, o) {
				fmt.Fprintf(a.stderr, "warning: %s\n", c)
			}
			_, err = a.stdout.Write(b)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Image, "image", "perfdag:latest", "container image holding /perfdag")
	f.StringVar(&o.Namespace, "namespace", "", "metadata.namespace (default: argo submit -n)")
	f.StringVar(&o.PVC, "pvc", "perfdag-campaigns", "ReadWriteMany PersistentVolumeClaim mounted at /campaigns")
	f.StringVar(&o.Secret, "secret", "perfdag-api-keys", "Secret holding the API keys, one key per api_key_env")
	f.StringVar(&o.ServiceAccount, "service-account", "", "spec.serviceAccountName")
	f.IntVar(&o.Retries, "retries", 2, "retryStrategy.limit per task (-1: none)")
	bound(f, "retries", -1, maxRetries, "-1: none; at most "+strconv.Itoa(maxRetries)+": a slice that failed that often needs a look, not another try")
	f.BoolVar(&o.Workflow, "workflow", false, "emit a Workflow even when the campaign has a schedule")
	return cmd
}
