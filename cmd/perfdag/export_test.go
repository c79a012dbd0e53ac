package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/perfdag/perfdag/engine/argo"
)

// argoSchemas compiles Argo's JSON Schema (testdata/argo/schema.json, a verbatim copy of
// argo-workflows v4.1.2 api/jsonschema/schema.json) once per kind, with every object that
// lists properties closed, so a misspelt key fails instead of passing silently.
var argoSchemas = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	f, err := os.Open(filepath.Join("testdata", "argo", "schema.json"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, err
	}
	root := doc.(map[string]any)
	for _, d := range root["definitions"].(map[string]any) {
		closeObjects(d)
	}
	out := map[string]*jsonschema.Schema{}
	for _, kind := range []string{"Workflow", "CronWorkflow"} {
		sub := map[string]any{"definitions": root["definitions"], "$ref": "#/definitions/io.argoproj.workflow.v1alpha1." + kind}
		if s, ok := root["$schema"]; ok {
			sub["$schema"] = s
		}
		c := jsonschema.NewCompiler()
		url := "file:///argo-" + kind + ".json"
		if err := c.AddResource(url, sub); err != nil {
			return nil, err
		}
		if out[kind], err = c.Compile(url); err != nil {
			return nil, err
		}
	}
	return out, nil
})

func closeObjects(v any) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["properties"]; ok {
			if _, set := x["additionalProperties"]; !set {
				x["additionalProperties"] = false
			}
		}
		for _, c := range x {
			closeObjects(c)
		}
	case []any:
		for _, c := range x {
			closeObjects(c)
		}
	}
}

// validateArgo checks one exported manifest against its kind's definition.
func validateArgo(t *testing.T, manifest []byte) string {
	t.Helper()
	schemas, err := argoSchemas()
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(manifest)
	if err != nil {
		t.Fatalf("manifest is not YAML: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	kind, _ := inst.(map[string]any)["kind"].(string)
	sch := schemas[kind]
	if sch == nil {
		t.Fatalf("kind %q is neither Workflow nor CronWorkflow", kind)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s does not validate against Argo's schema:\n%v", kind, err)
	}
	return kind
}

func exportArgo(t *testing.T, file string, extra ...string) []byte {
	t.Helper()
	var out, errb bytes.Buffer
	a := testApp()
	a.stdout, a.stderr = &out, &errb
	if code := a.main(append([]string{"export", "argo", file}, extra...)); code != 0 {
		t.Fatalf("export argo %s: exit %d: %s", file, code, errb.String())
	}
	return out.Bytes()
}

// fortyCells writes a 40-cell campaign over three endpoints (one behind an API key) with a
// schedule.
func fortyCells(t *testing.T) string {
	var b strings.Builder
	b.WriteString("version: 1\ncampaign: forty\nendpoints:\n")
	for i, n := range []string{"alpha", "beta", "gamma"} {
		fmt.Fprintf(&b, "  %s: {url: \"sim://%d\", model: m, api_key_env: KEY_%s}\n", n, i, strings.ToUpper(n))
	}
	b.WriteString("cells:\n")
	for i := range 40 {
		ep := []string{"alpha", "beta", "gamma"}[i%3]
		fmt.Fprintf(&b, "  - {id: c%02d, endpoint: %s, workload: {shape: aa-1k}, concurrencies: [1, 4], requests_per_point: 2x}\n", i, ep)
	}
	b.WriteString("schedule: {cron: \"0 2 * * *\", timezone: Europe/Berlin, overlap: replace, catchup_window: 2h}\n")
	p := filepath.Join(t.TempDir(), "forty.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every shipped pipeline, every example of the docs and a 40-cell, 3-endpoint scheduled
// campaign export manifests that validate against Argo's JSON Schema (objects closed).
func TestExportArgoValidates(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "pipelines", "*.yaml"))
	examples, _ := filepath.Glob(filepath.Join("..", "..", "docs", "examples", "*.yaml"))
	if len(files) == 0 || len(examples) == 0 {
		t.Fatal("no pipelines or docs examples found")
	}
	files = append(files, examples...)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			validateArgo(t, exportArgo(t, f))
			validateArgo(t, exportArgo(t, f, "--workflow", "--retries", "-1", "--namespace", "bench"))
		})
	}
	t.Run("forty-cells", func(t *testing.T) {
		m := exportArgo(t, fortyCells(t))
		if kind := validateArgo(t, m); kind != "CronWorkflow" {
			t.Fatalf("scheduled campaign exported as %s", kind)
		}
		var doc struct {
			Spec struct {
				Schedules         []string `yaml:"schedules"`
				Timezone          string   `yaml:"timezone"`
				ConcurrencyPolicy string   `yaml:"concurrencyPolicy"`
				Deadline          int      `yaml:"startingDeadlineSeconds"`
				WorkflowSpec      struct {
					Templates []struct {
						Name string `yaml:"name"`
						DAG  *struct {
							Tasks []struct{ Name string } `yaml:"tasks"`
						} `yaml:"dag"`
						Synchronization struct {
							Mutexes []struct{ Name string } `yaml:"mutexes"`
						} `yaml:"synchronization"`
						Container struct {
							Env []struct {
								Name      string `yaml:"name"`
								ValueFrom struct {
									SecretKeyRef struct{ Name, Key string } `yaml:"secretKeyRef"`
								} `yaml:"valueFrom"`
							} `yaml:"env"`
						} `yaml:"container"`
					} `yaml:"templates"`
				} `yaml:"workflowSpec"`
			} `yaml:"spec"`
		}
		if err := yaml.Unmarshal(m, &doc); err != nil {
			t.Fatal(err)
		}
		s := doc.Spec
		if strings.Join(s.Schedules, ",") != "0 2 * * *" || s.Timezone != "Europe/Berlin" || s.ConcurrencyPolicy != "Replace" || s.Deadline != 7200 {
			t.Fatalf("schedule mapped to %+v %q %q %d", s.Schedules, s.Timezone, s.ConcurrencyPolicy, s.Deadline)
		}
		tasks, endpointLocks := 0, map[string]bool{}
		for _, tp := range s.WorkflowSpec.Templates {
			if tp.DAG != nil {
				tasks = len(tp.DAG.Tasks)
				continue
			}
			if tp.Name == argo.OutcomeTask { // reads the directory; needs no key
				continue
			}
			for _, mu := range tp.Synchronization.Mutexes {
				if strings.HasPrefix(mu.Name, "perfdag-endpoint-") {
					endpointLocks[mu.Name] = true
				}
			}
			if len(tp.Container.Env) != 3 || tp.Container.Env[0].ValueFrom.SecretKeyRef.Key != "KEY_ALPHA" {
				t.Fatalf("template %s: API keys not from the Secret: %+v", tp.Name, tp.Container.Env)
			}
		}
		if tasks < 40 || len(endpointLocks) != 3 {
			t.Fatalf("%d tasks, %d endpoint mutexes; want >= 40 cells and 3", tasks, len(endpointLocks))
		}
		if bytes.Contains(m, []byte("secret-value")) {
			t.Fatal("a key value leaked into the manifest")
		}
	})
}

// The closed schema is strict: a misspelt task key and a CronWorkflow without schedules fail.
func TestArgoSchemaCatchesMistakes(t *testing.T) {
	schemas, err := argoSchemas()
	if err != nil {
		t.Fatal(err)
	}
	m := exportArgo(t, filepath.Join("..", "..", "pipelines", "quickstart.yaml"))
	for name, bad := range map[string][]byte{
		"typo":        bytes.Replace(m, []byte("template: "), []byte("templat: "), 1),
		"no-schedule": []byte("apiVersion: argoproj.io/v1alpha1\nkind: CronWorkflow\nmetadata: {name: x}\nspec: {schedule: '0 2 * * *', workflowSpec: {entrypoint: a}}\n"),
	} {
		js, err := yaml.YAMLToJSON(bad)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
		if err != nil {
			t.Fatal(err)
		}
		kind := inst.(map[string]any)["kind"].(string)
		if schemas[kind].Validate(inst) == nil {
			t.Errorf("%s: the mistake validated", name)
		}
	}
}

// overlap: queue has no Argo equivalent: the export says so on stderr, and the manifest —
// still valid — carries it as comments and an annotation.
func TestExportArgoQueueCaveat(t *testing.T) {
	src := strings.Replace(quickstartWithSchedule(t), "overlap: skip", "overlap: queue", 1)
	p := filepath.Join(t.TempDir(), "queued.yaml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	a := testApp()
	a.stdout, a.stderr = &out, &errb
	if code := a.main([]string{"export", "argo", p}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "warning: schedule.overlap queue: Argo has no queue policy") {
		t.Errorf("no warning on stderr:\n%s", errb.String())
	}
	if kind := validateArgo(t, out.Bytes()); kind != "CronWorkflow" {
		t.Fatalf("kind %s", kind)
	}
	for _, want := range []string{"# caveat: schedule.overlap queue", "perfdag.dev/export-caveats:", "concurrencyPolicy: Allow"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("manifest lacks %q", want)
		}
	}
}

// quickstartWithSchedule is the quickstart pipeline with a schedule that skips overlaps.
func quickstartWithSchedule(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "pipelines", "quickstart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\nschedule: {cron: \"0 2 * * *\", overlap: skip}\n"
}
