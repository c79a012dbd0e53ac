package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/perfdag/perfdag/engine/argo"
	"github.com/perfdag/perfdag/steps/measure/shard"
)

// shardedCampaign measures cell split over %[2]d clients and cell one alone on the endpoint
// at %[1]s.
const shardedCampaign = `version: 1
campaign: sharded
endpoints:
  e: {url: "%[1]s", model: m}
cells:
  - {id: split, workload: {shape: custom, input_tokens: 64, output_tokens: %[3]d}, concurrencies: [4, 8], requests_per_point: %[4]d, clients: %[2]d}
  - {id: one, workload: {shape: custom, input_tokens: 64, output_tokens: %[3]d}, concurrencies: [4], requests_per_point: %[4]d}
`

// TestExportArgoClients (issue 30 item 4): a cell with clients: 3 exports as a DAG template
// holding its endpoint's mutex, of 3 client pods (a daemon `perfdag shard --listen`, ready
// once it listens) started together and a run task that waits for all of them and drives them
// at their pod addresses; the clients and the run task hold the token from the Secret. The
// manifest validates against Argo's closed schema. A sharded cell on a sim:// endpoint, which
// client pods cannot reach, is refused.
func TestExportArgoClients(t *testing.T) {
	if argo.ShardTokenEnv != shard.TokenEnv {
		t.Fatalf("the export's token variable %s is not the one perfdag shard reads, %s", argo.ShardTokenEnv, shard.TokenEnv)
	}
	const url = "http://vllm.bench.svc:8000"
	file := filepath.Join(t.TempDir(), "sharded.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, shardedCampaign, url, 3, 16, 30), 0o644); err != nil {
		t.Fatal(err)
	}
	out := exportArgo(t, file)
	validateArgo(t, out)
	var m wfManifest
	if err := yaml.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	tmpl := func(name string) *wfTemplate {
		for i := range m.Spec.Templates {
			if m.Spec.Templates[i].Name == name {
				return &m.Spec.Templates[i]
			}
		}
		t.Fatalf("no template %s", name)
		return nil
	}
	var cellTask string
	for _, task := range tmpl(m.Spec.Entrypoint).DAG.Tasks {
		if task.Name == "cell-split" {
			cellTask = task.Template
		}
	}
	split := tmpl(cellTask)
	mutex := argo.EndpointMutex(url)
	if split.DAG == nil || len(split.Synchronization.Mutexes) != 1 || split.Synchronization.Mutexes[0].Name != mutex || split.RetryStrategy.Limit != "2" {
		t.Fatalf("cell split's template %s: want a DAG holding %s, retried; got %+v", cellTask, mutex, split)
	}
	var clients []string
	var run *wfTask
	for i, task := range split.DAG.Tasks {
		switch {
		case task.Template == argo.ShardClientTemplate:
			if len(task.Dependencies) != 0 {
				t.Errorf("client task %s waits for %v: the clients start together", task.Name, task.Dependencies)
			}
			clients = append(clients, task.Name)
		case task.Name == "run":
			run = &split.DAG.Tasks[i]
		default:
			t.Errorf("unexpected task %+v", task)
		}
	}
	if len(clients) != 3 || run == nil || !slices.Equal(run.Dependencies, clients) {
		t.Fatalf("want 3 client tasks and a run task depending on them all; got clients %v, run %+v", clients, run)
	}
	params := map[string]string{}
	for _, p := range run.Arguments.Parameters {
		params[p.Name] = p.Value
	}
	if want := "{{tasks.client-0.ip}}:7070,{{tasks.client-1.ip}}:7070,{{tasks.client-2.ip}}:7070"; params["clients"] != want || params["only"] != "{{inputs.parameters.only}}" {
		t.Errorf("run task's parameters %v, want clients %s and the slice's nodes", params, want)
	}
	rt := tmpl(run.Template)
	if args := strings.Join(rt.Container.Args, " "); !strings.HasSuffix(args, "--slice --only-list {{inputs.parameters.only}} --clients-at {{inputs.parameters.clients}}") {
		t.Errorf("run template's args: %s", args)
	}
	if rt.RetryStrategy.Limit != "" {
		t.Errorf("the run task retries (%s) without new client pods: the DAG retries", rt.RetryStrategy.Limit)
	}
	if len(rt.Synchronization.Mutexes) != 0 {
		t.Errorf("the run task takes %v again inside the DAG holding it", rt.Synchronization.Mutexes)
	}
	daemon := tmpl(argo.ShardClientTemplate)
	if !daemon.Daemon || strings.Join(daemon.Container.Args, " ") != "shard --listen :7070" || daemon.Container.ReadinessProbe.TCPSocket.Port != "shard" ||
		len(daemon.Container.Ports) != 1 || daemon.Container.Ports[0].ContainerPort != 7070 {
		t.Errorf("client template: %+v", daemon)
	}
	for _, tp := range []*wfTemplate{rt, daemon} {
		var token bool
		for _, e := range tp.Container.Env {
			token = token || e.Name == shard.TokenEnv && e.ValueFrom.SecretKeyRef.Name == "perfdag-api-keys" && e.ValueFrom.SecretKeyRef.Key == shard.TokenEnv
		}
		if !token {
			t.Errorf("template %s does not read %s from the Secret: %+v", tp.Name, shard.TokenEnv, tp.Container.Env)
		}
	}
	if tp := tmpl("load-e"); tp.Container.Args == nil || len(tp.Synchronization.Mutexes) != 1 {
		t.Errorf("cell one (one client) is not the plain slice container holding the mutex: %+v", tp)
	}
	if bytes.Contains(out, []byte("client-3")) {
		t.Error("a fourth client pod")
	}

	// a simulator inside the run pod is out of the client pods' reach
	simFile := filepath.Join(t.TempDir(), "sim.yaml")
	if err := os.WriteFile(simFile, fmt.Appendf(nil, shardedCampaign, "sim://local", 2, 16, 30), 0o644); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	a := testApp()
	a.stdout, a.stderr = &o, &e
	if code := a.main([]string{"export", "argo", simFile}); code != ExitInvalid || !strings.Contains(e.String(), "cannot reach endpoint e's simulator") {
		t.Errorf("export of a sharded cell on sim://: exit %d, %s", code, e.String())
	}
}
