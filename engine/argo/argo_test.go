package argo

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/perfdag/perfdag/engine/enginetest"
	"github.com/perfdag/perfdag/engine/plan"
)

// compile builds the plan of a campaign on enginetest's fake kinds (named like the real ones:
// point- and cell-scope kinds that hold the endpoint, campaign-scope aggregate/render/publish).
func compile(t *testing.T, src string) *plan.Plan {
	t.Helper()
	reg := enginetest.Registry(t, enginetest.NewRecorder())
	p, err := plan.Compile(enginetest.Load(t, src, reg))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// twoEndpoints is a campaign over two endpoints, one behind an API key, with extra appended.
func twoEndpoints(extra string) string {
	return `version: 1
campaign: two_endpoints
endpoints:
  east: {url: "http://user:hunter2@east.example:8000/v1", model: m, api_key_env: EAST_KEY}
  west: {url: "http://west.example:8000/v1", model: m}
  alias: {url: "http://other:pw@east.example:8000/v1?x=1", model: m, api_key_env: EAST_KEY}
cells:
  - {id: a, endpoint: east, workload: {shape: aa-1k}, concurrencies: [1, 2]}
  - {id: b, endpoint: west, workload: {shape: aa-1k}, concurrencies: [1]}
  - {id: c, endpoint: east, workload: {shape: aa-1k}, concurrencies: [1]}
  - {id: d, endpoint: alias, workload: {shape: aa-1k}, concurrencies: [1]}
` + extra
}

func manifest(t *testing.T, src string, o Options) *Doc {
	t.Helper()
	d, err := Manifest(compile(t, src), o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func workflowSpec(t *testing.T, d *Doc) WorkflowSpec {
	t.Helper()
	switch s := d.Spec.(type) {
	case WorkflowSpec:
		return s
	case CronSpec:
		return s.WorkflowSpec
	}
	t.Fatalf("spec is %T", d.Spec)
	return WorkflowSpec{}
}

// The schedule maps to the CronWorkflow: overlap to concurrencyPolicy (queue, which Argo
// lacks, to Allow with a caveat), the zone to timezone (a TZ=/CRON_TZ= prefix moved there,
// none meaning UTC, not Argo's controller-local default), catchup_window to
// startingDeadlineSeconds; --workflow exports a Workflow anyway.
func TestCronMapping(t *testing.T) {
	for _, c := range []struct {
		schedule, schedules, timezone, policy string
		deadline                              int64
		caveats                               []string // substrings, one per caveat
	}{
		{schedule: `{cron: "0 2 * * *"}`, schedules: "0 2 * * *", timezone: "UTC", policy: "Forbid"},
		{schedule: `{cron: "0 2 * * *", overlap: skip}`, schedules: "0 2 * * *", timezone: "UTC", policy: "Forbid"},
		{schedule: `{cron: "0 2 * * *", overlap: replace, timezone: Europe/Berlin}`, schedules: "0 2 * * *", timezone: "Europe/Berlin", policy: "Replace"},
		{schedule: `{cron: "0 2 * * *", overlap: queue}`, schedules: "0 2 * * *", timezone: "UTC", policy: "Allow", caveats: []string{"no queue policy"}},
		{schedule: `{cron: "CRON_TZ=Asia/Tokyo 30 1 * * 1-5", catchup_window: 2h}`, schedules: "30 1 * * 1-5", timezone: "Asia/Tokyo", policy: "Forbid", deadline: 7200},
		{schedule: `{cron: "TZ=America/New_York @daily", timezone: America/New_York}`, schedules: "@daily", timezone: "America/New_York", policy: "Forbid"},
		{schedule: `{cron: "0 3 * * *", catchup_window: 24h, catchup_max: 3, baseline: nightly}`, schedules: "0 3 * * *", timezone: "UTC", policy: "Forbid", deadline: 86400,
			caveats: []string{"catchup_max 3", "baseline diff"}},
	} {
		t.Run(c.schedule, func(t *testing.T) {
			src := twoEndpoints("schedule: " + c.schedule + "\n")
			d := manifest(t, src, Options{})
			if d.Kind != "CronWorkflow" || d.Metadata.Name != "two-endpoints" {
				t.Fatalf("kind %s name %q", d.Kind, d.Metadata.Name)
			}
			s := d.Spec.(CronSpec)
			got := fmt.Sprint(s.Schedules, s.Timezone, s.ConcurrencyPolicy, s.StartingDeadlineSeconds)
			if want := fmt.Sprint([]string{c.schedules}, c.timezone, c.policy, c.deadline); got != want {
				t.Errorf("mapped to %s, want %s", got, want)
			}
			cav := Caveats(compile(t, src), Options{})
			if len(cav) != len(c.caveats) {
				t.Fatalf("caveats %q, want %d", cav, len(c.caveats))
			}
			for i, want := range c.caveats {
				if !strings.Contains(cav[i], want) {
					t.Errorf("caveat %q does not say %q", cav[i], want)
				}
			}
			ann := d.Metadata.Annotations[CaveatsAnnotation]
			if (ann != "") != (len(cav) > 0) || ann != strings.Join(cav, "\n") {
				t.Errorf("annotation %q, caveats %q", ann, cav)
			}
			out, err := Export(compile(t, src), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range cav {
				if !strings.Contains(string(out), "# caveat: "+x+"\n") {
					t.Errorf("the exported YAML does not carry the caveat %q as a comment", x)
				}
			}
			w := manifest(t, src, Options{Workflow: true})
			if w.Kind != "Workflow" || w.Metadata.GenerateName != "two-endpoints-" || w.Metadata.Annotations != nil {
				t.Errorf("--workflow: kind %s generateName %q annotations %v", w.Kind, w.Metadata.GenerateName, w.Metadata.Annotations)
			}
		})
	}
}

// The endpoint mutex is named from scheme, host and path: credentials and the query never
// change it (and never appear in it), anything that picks another server does.
func TestEndpointMutex(t *testing.T) {
	base := EndpointMutex("http://east.example:8000/v1")
	for _, c := range []struct {
		url  string
		same bool
	}{
		{"http://user:secret@east.example:8000/v1", true},
		{"http://east.example:8000/v1?api-version=2", true},
		{"https://east.example:8000/v1", false},
		{"http://east.example:8001/v1", false},
		{"http://west.example:8000/v1", false},
		{"http://east.example:8000/v2", false},
	} {
		m := EndpointMutex(c.url)
		if !strings.HasPrefix(m, "perfdag-endpoint-") || len(m) != len("perfdag-endpoint-")+16 || strings.Contains(m, "secret") {
			t.Errorf("%s: mutex %q", c.url, m)
		}
		if (m == base) != c.same {
			t.Errorf("%s: mutex %s, the base's %s: want same=%v", c.url, m, base, c.same)
		}
	}
}

// Tasks are slices: one per cell, one per campaign-scope node. A cell slice that loads an
// endpoint holds its endpoints' mutexes (endpoints on one server share one) and not the
// directory's — cell slices share the directory; campaign-scope slices hold the directory's.
// Every slice's task runs `perfdag run --slice`; the last task, after every slice nothing
// else waits for, runs `perfdag status --check`. API keys come from the Secret by reference,
// one env var per distinct api_key_env, never inline.
func TestSlicesMutexesAndSecrets(t *testing.T) {
	src := twoEndpoints("")
	d := manifest(t, src, Options{Secret: "bench-keys"})
	if d.Kind != "Workflow" {
		t.Fatalf("kind %s", d.Kind)
	}
	wf := workflowSpec(t, d)
	tmpl := map[string]Template{}
	for _, tp := range wf.Templates {
		tmpl[tp.Name] = tp
	}
	dag := tmpl[wf.Entrypoint].DAG
	if dag == nil {
		t.Fatal("entrypoint is not a DAG")
	}
	east, west := EndpointMutex("http://east.example:8000/v1"), EndpointMutex("http://west.example:8000/v1")
	dirMutex := "perfdag-dir-{{workflow.name}}"
	want := map[string]struct {
		deps  []string
		locks []string
	}{
		"cell-a":    {deps: nil, locks: []string{east}},
		"cell-b":    {deps: nil, locks: []string{west}},
		"cell-c":    {deps: []string{"cell-a"}, locks: []string{east}},
		"cell-d":    {deps: nil, locks: []string{east}},
		"aggregate": {deps: []string{"cell-a", "cell-b", "cell-c", "cell-d"}, locks: []string{dirMutex}},
		"render":    {deps: []string{"aggregate"}, locks: []string{dirMutex}},
		"publish":   {deps: []string{"render"}, locks: []string{dirMutex}},
		OutcomeTask: {deps: []string{"publish"}}, // every slice nothing else waits for
	}
	if len(dag.Tasks) != len(want) {
		t.Fatalf("%d tasks, want %d: %+v", len(dag.Tasks), len(want), dag.Tasks)
	}
	for _, task := range dag.Tasks {
		w, ok := want[task.Name]
		if !ok {
			t.Errorf("unexpected task %s", task.Name)
			continue
		}
		if !slices.Equal(task.Dependencies, w.deps) {
			t.Errorf("%s depends on %v, want %v", task.Name, task.Dependencies, w.deps)
		}
		tp := tmpl[task.Template]
		var locks []string
		for _, m := range tp.Synchronization.mutexes() {
			locks = append(locks, m.Name)
		}
		if !slices.Equal(locks, w.locks) {
			t.Errorf("%s (template %s) holds %v, want %v", task.Name, tp.Name, locks, w.locks)
		}
		if task.Name == OutcomeTask {
			if args := strings.Join(tp.Container.Args, " "); args != "status /campaigns/{{workflow.name}} --check" || tp.RetryStrategy != nil || len(tp.Container.Env) > 0 {
				t.Errorf("the last task runs %q (retry %+v, env %+v)", args, tp.RetryStrategy, tp.Container.Env)
			}
			continue
		}
		if len(task.Arguments.Parameters) != 1 || task.Arguments.Parameters[0].Name != "only" {
			t.Fatalf("%s arguments %+v", task.Name, task.Arguments)
		}
		for _, id := range strings.Split(task.Arguments.Parameters[0].Value, "\n") {
			if cell := strings.TrimPrefix(task.Name, "cell-"); cell != task.Name && !strings.Contains(id, "["+cell) {
				t.Errorf("%s runs %s, a node of another cell", task.Name, id)
			}
		}
		if !slices.Contains(tp.Container.Args, "--slice") {
			t.Errorf("%s runs %v, without --slice", task.Name, tp.Container.Args)
		}
		env := tp.Container.Env
		if len(env) != 1 || env[0].Name != "EAST_KEY" || env[0].ValueFrom.SecretKeyRef.Name != "bench-keys" || env[0].ValueFrom.SecretKeyRef.Key != "EAST_KEY" {
			t.Errorf("%s env %+v: want EAST_KEY from Secret bench-keys, once", tp.Name, env)
		}
	}
	out, err := Export(compile(t, src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"hunter2", "pw@", "user:"} {
		if strings.Contains(string(out), leak) {
			t.Errorf("the manifest holds %q", leak)
		}
	}
	var back map[string]any
	if err := yaml.Unmarshal(out, &back); err != nil || back["kind"] != "Workflow" {
		t.Fatalf("exported YAML does not read back (%v): %v", err, back["kind"])
	}
}

// retries → retryStrategy: the default 2, a given limit as the quoted string the schema
// wants, none for a negative number; a retried attempt resumes, so the policy is Always.
func TestRetryStrategy(t *testing.T) {
	for _, c := range []struct {
		retries int
		limit   string // "" = no retryStrategy
	}{{0, "2"}, {1, "1"}, {6, "6"}, {-1, ""}} {
		wf := workflowSpec(t, manifest(t, twoEndpoints(""), Options{Retries: c.retries}))
		for _, tp := range wf.Templates {
			if tp.Container == nil || tp.Name == OutcomeTask {
				if tp.RetryStrategy != nil {
					t.Errorf("retries %d: DAG template %s has a retryStrategy", c.retries, tp.Name)
				}
				continue
			}
			got := ""
			if tp.RetryStrategy != nil {
				got = tp.RetryStrategy.Limit
				if tp.RetryStrategy.RetryPolicy != "Always" {
					t.Errorf("retries %d: policy %q", c.retries, tp.RetryStrategy.RetryPolicy)
				}
			}
			if got != c.limit {
				t.Errorf("retries %d: template %s limit %q, want %q", c.retries, tp.Name, got, c.limit)
			}
		}
	}
}

// Task names are DNS-ish, short and unique however the ids are spelt.
func TestNames(t *testing.T) {
	used := map[string]bool{}
	for _, c := range []struct{ in, want string }{
		{"run-shape[aa-1k/c16]", "run-shape-aa-1k-c16"},
		{"Strict Publish", "strict-publish"},
		{"strict_publish", "strict-publish-2"},
		{"---", "task"},
		{strings.Repeat("x", 70), strings.Repeat("x", 50) + "-"},
	} {
		got := uniqueName(dnsName(c.in), used)
		if !strings.HasPrefix(got, c.want) || len(got) > 63 {
			t.Errorf("%q → %q, want %q", c.in, got, c.want)
		}
	}
}

func (s *Synchronization) mutexes() []Mutex {
	if s == nil {
		return nil
	}
	return s.Mutexes
}

// A campaign whose cells load no endpoint (exec steps only) still slices by cell: those
// slices share the "cell" template, which takes no mutex at all.
func TestCellsWithoutEndpoints(t *testing.T) {
	src := `version: 1
campaign: execs
endpoints:
  main: {url: "sim://", model: m}
cells:
  - {id: a, workload: {shape: aa-1k}, concurrencies: [1]}
  - {id: b, workload: {shape: aa-1k}, concurrencies: [1]}
pipeline:
  - {id: s, kind: step, foreach: cell}
  - {id: agg, kind: aggregate, needs: [s]}
`
	wf := workflowSpec(t, manifest(t, src, Options{}))
	for _, tp := range wf.Templates {
		switch tp.Name {
		case "campaign", OutcomeTask:
		case "cell":
			if tp.Synchronization != nil {
				t.Errorf("cell template holds %+v", tp.Synchronization)
			}
		case "analysis":
			if m := tp.Synchronization.mutexes(); len(m) != 1 || m[0].Name != "perfdag-dir-{{workflow.name}}" {
				t.Errorf("analysis template holds %+v", m)
			}
		default:
			t.Errorf("unexpected template %s", tp.Name)
		}
	}
	for _, task := range wf.Templates[0].DAG.Tasks {
		if want := map[string]string{"cell-a": "cell", "cell-b": "cell", "agg": "analysis", OutcomeTask: OutcomeTask}[task.Name]; task.Template != want {
			t.Errorf("task %s uses template %s, want %s", task.Name, task.Template, want)
		}
	}
}

// Pods run as the image's user with the volume's group set to it; a campaign publishing to
// PostgreSQL takes the lake's password from the Secret (optional: the URL or a .pgpass may
// carry it), a SQLite lake needs none.
func TestSecurityContextAndLakePassword(t *testing.T) {
	for _, c := range []struct {
		lake string
		env  []string
	}{
		{"", []string{"EAST_KEY"}},
		{"sqlite://lake.db", []string{"EAST_KEY"}},
		{"postgres://perfdag@pg.bench.svc:5432/lake", []string{"EAST_KEY", "PGPASSWORD"}},
		{"postgresql://perfdag@pg.bench.svc/lake", []string{"EAST_KEY", "PGPASSWORD"}},
	} {
		extra := ""
		if c.lake != "" {
			extra = "publish: {lake: \"" + c.lake + "\"}\n"
		}
		wf := workflowSpec(t, manifest(t, twoEndpoints(extra), Options{Secret: "keys"}))
		if sc := wf.SecurityContext; sc == nil || !sc.RunAsNonRoot || sc.RunAsUser != 65532 || sc.RunAsGroup != 65532 || sc.FSGroup != 65532 {
			t.Errorf("%q: securityContext %+v", c.lake, sc)
		}
		for _, tp := range wf.Templates {
			if tp.Container == nil || tp.Name == OutcomeTask {
				continue
			}
			var names []string
			for _, e := range tp.Container.Env {
				names = append(names, e.Name)
				ref := e.ValueFrom.SecretKeyRef
				if ref.Name != "keys" || ref.Key != e.Name || ref.Optional != (e.Name == "PGPASSWORD") {
					t.Errorf("%q: %s from %+v", c.lake, e.Name, ref)
				}
			}
			if !slices.Equal(names, c.env) {
				t.Errorf("%q: template %s env %v, want %v", c.lake, tp.Name, names, c.env)
			}
		}
	}
}
