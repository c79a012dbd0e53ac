package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/perfdag/perfdag/engine/argo"
	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit"
)

// wfManifest is the part of an exported Workflow the interpreter reads.
type wfManifest struct {
	Spec struct {
		Entrypoint string       `yaml:"entrypoint"`
		Templates  []wfTemplate `yaml:"templates"`
	} `yaml:"spec"`
}

// wfTemplate is one template: a DAG, a container, or a daemon container.
type wfTemplate struct {
	Name   string `yaml:"name"`
	Inputs struct {
		Artifacts []struct {
			Path string                `yaml:"path"`
			Raw  struct{ Data string } `yaml:"raw"`
		} `yaml:"artifacts"`
	} `yaml:"inputs"`
	Synchronization struct {
		Mutexes []struct{ Name string } `yaml:"mutexes"`
	} `yaml:"synchronization"`
	RetryStrategy struct{ Limit string } `yaml:"retryStrategy"`
	Daemon        bool                   `yaml:"daemon"`
	DAG           *struct {
		Tasks []wfTask `yaml:"tasks"`
	} `yaml:"dag"`
	Container struct {
		Command []string `yaml:"command"`
		Args    []string `yaml:"args"`
		Env     []struct {
			Name      string `yaml:"name"`
			ValueFrom struct {
				SecretKeyRef struct{ Name, Key string } `yaml:"secretKeyRef"`
			} `yaml:"valueFrom"`
		} `yaml:"env"`
		VolumeMounts []struct {
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
		Ports []struct {
			ContainerPort int `yaml:"containerPort"`
		} `yaml:"ports"`
		ReadinessProbe struct {
			TCPSocket struct{ Port string } `yaml:"tcpSocket"`
		} `yaml:"readinessProbe"`
	} `yaml:"container"`
}

// wfTask is one task of a DAG template.
type wfTask struct {
	Name         string   `yaml:"name"`
	Template     string   `yaml:"template"`
	Dependencies []string `yaml:"dependencies"`
	Arguments    struct {
		Parameters []struct{ Name, Value string } `yaml:"parameters"`
	} `yaml:"arguments"`
}

// sliceCampaign measures four cells on two deterministic simulators (cells of one endpoint
// are ordered, cells of different endpoints are not) after a campaign-scope exec step, with
// bracketing scrapes, DCGM correlation, a per-cell exec step, a gate, the atlas, the report
// and a SQLite lake: every kind of output a slice writes or a campaign-scope step merges.
// The fail gate stands on cells b and c (simulated TTFT p50 42.4 and 41.6 ms; a and d have
// 40.8): their exec steps are blocked, the report and the lake are written, and the run
// exits 4 (refused). The exec steps of cells a and d wait for each other: they complete only
// when the two cells run at the same time — in one run's worker pool, or in two concurrent
// slices.
const sliceCampaign = `version: 1
campaign: slices
endpoints:
  east: {url: "sim://east", model: m, sim: {deterministic: true}}
  west: {url: "sim://west", model: m, sim: {deterministic: true, reasoning: true, reasoning_tokens: 5}}
cells:
  - {id: a, endpoint: east, workload: {shape: custom, input_tokens: 100, output_tokens: 20}, concurrencies: [1, 4]}
  - {id: b, endpoint: west, workload: {shape: custom, input_tokens: 300, output_tokens: 10}, concurrencies: [2]}
  - {id: c, endpoint: east, workload: {shape: custom, input_tokens: 200, output_tokens: 10}, concurrencies: [1]}
  - {id: d, endpoint: west, workload: {shape: custom, input_tokens: 100, output_tokens: 30}, concurrencies: [1, 2]}
pipeline:
  - {id: deploy, kind: exec, with: {command: [sh, -c, 'echo "{\"deployed\": 1}"']}}
  - {id: scrape-spec, kind: scrape-spec, brackets: run-shape}
  - {id: run-shape, kind: run-shape, needs: [deploy]}
  - {id: dcgm-correlate, kind: dcgm-correlate, needs: [run-shape]}
  - id: note
    kind: exec
    foreach: cell
    needs: [run-shape]
    with:
      command:
        - sh
        - -c
        - |
          # cells a and d meet: each waits (a minute at most) until the other's note started
          case "$PERFDAG_CELL" in a) other=d ;; d) other=a ;; *) other= ;; esac
          touch "$PERFDAG_DIR/../met-$PERFDAG_CELL"
          i=0
          while [ -n "$other" ] && [ ! -e "$PERFDAG_DIR/../met-$other" ]; do
            i=$((i + 1)); [ $i -le 600 ] || { echo "cell $other never ran alongside" >&2; exit 1; }
            sleep 0.1
          done
          echo "{\"cell\": \"$PERFDAG_CELL\"}"
  - {id: aggregate, kind: aggregate, needs: [run-shape, dcgm-correlate, scrape-spec]}
  - {id: render, kind: render, needs: [aggregate]}
  - {id: strict-publish, kind: strict-publish, needs: [render]}
gates:
  - {id: fast, on: run-shape, rule: ttft_p50_ms < 41.0, severity: fail}
publish: {lake: "sqlite://lake.db", strict: false}
`

// An exported Workflow run task by task as local processes — two workers, a task starts only
// when its dependencies succeeded and every mutex its template names is free (as Argo's
// controller does), attempts SIGKILLed at random and retried up to retryStrategy.limit — ends
// with the same campaign directory as one `perfdag run`: the same checkpoints (status,
// fingerprint, result, outputs' digests, gate verdicts), atlas, report text and lake rows.
// The endpoints are deterministic simulators, so the comparison is exact apart from run ids,
// timestamps and the paths the two runs were given. Every slice's task succeeds; the last
// task exits with the run's code. Slices of cells a and d ran concurrently in two processes:
// the event log, appended by both, shows a node of one slice starting while a node of the
// other was running.
func TestArgoWorkflowInterpreted(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns perfdag processes")
	}
	pdftotext := testkit.NeedTool(t, "pdftotext")
	root := t.TempDir()
	refBase := filepath.Join(root, "ref")
	file := propWrite(t, refBase, sliceCampaign)
	refDir := filepath.Join(refBase, "out")
	ref := perfdagChild("run", file, "--out", refDir)
	if out, err := ref.CombinedOutput(); ref.ProcessState == nil || ref.ProcessState.ExitCode() != ExitRefused {
		t.Fatalf("reference run: %v, want exit %d (refused)\n%s", err, ExitRefused, out)
	}
	var m wfManifest
	if err := yaml.Unmarshal(exportArgo(t, file, "--retries", "6"), &m); err != nil {
		t.Fatal(err)
	}
	pod := filepath.Join(root, "pod")
	kills, codes := interpret(t, &m, pod, "wf-test")
	for task, code := range codes {
		if want := map[bool]int{true: ExitRefused, false: 0}[task == argo.OutcomeTask]; code != want {
			t.Errorf("task %s exited %d, want %d", task, code, want)
		}
	}
	if _, ok := codes[argo.OutcomeTask]; !ok {
		t.Errorf("the workflow has no task %s", argo.OutcomeTask)
	}
	podBase := filepath.Join(pod, "work") // where the campaign file, and so the lake, lives
	dir := filepath.Join(pod, "campaigns", "wf-test")
	got, want := finalState(t, dir), finalState(t, refDir)
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for id, w := range want {
		g := got[id]
		if g == nil {
			t.Errorf("%s missing", id)
			continue
		}
		gj, wj := recordKey(g), recordKey(w)
		if a, b := propNormalize(gj, podBase), propNormalize(wj, refBase); a != b {
			t.Errorf("%s differs:\n got %s\nwant %s", id, a, b)
		}
	}
	for _, c := range campaignOutputs(pdftotext) {
		a := propNormalize(c.get(t, podBase, dir), podBase)
		b := propNormalize(c.get(t, refBase, refDir), refBase)
		if a != b {
			t.Errorf("%s differs between the interpreted Workflow and one run:\n%s", c.what, propDiff(a, b))
		}
	}
	overlaps := sliceOverlaps(t, dir)
	if overlaps == 0 {
		t.Error("no two slices ran a node at the same time")
	}
	t.Logf("%d records, atlas, report text and lake rows equal after %d SIGKILLs; %d overlapping node pairs of concurrent slices", len(want), kills, overlaps)
}

// sliceOverlaps counts pairs of nodes run by two different processes (runs) that overlapped:
// one started between the other's start and end, in the order of the event log, which every
// process appends to whole lines under a file lock. Attempts killed mid-node never end and
// do not count.
func sliceOverlaps(t *testing.T, dir string) int {
	t.Helper()
	evs, err := events.Read(campaigndir.Events(dir))
	if err != nil {
		t.Fatal(err)
	}
	type span struct {
		run        string
		start, end int
	}
	open := map[[2]string]int{}
	var spans []span
	for i, e := range evs {
		key := [2]string{e.Run, e.Node}
		switch e.Type {
		case events.NodeStart:
			open[key] = i
		case events.NodeEnd:
			if s, ok := open[key]; ok {
				spans = append(spans, span{e.Run, s, i})
				delete(open, key)
			}
		}
	}
	n := 0
	for i, a := range spans {
		for _, b := range spans[i+1:] {
			if a.run != b.run && a.start < b.end && b.start < a.end {
				n++
			}
		}
	}
	return n
}

// recordKey is what a checkpoint must agree on between the Workflow and one run. The report's
// PDF carries its creation time, so its digest — and the fingerprint and receipt of the
// publish that reads it — differ between any two runs: for those nodes the file names stand
// in for the digests, and the report's text and the lake rows are compared instead.
func recordKey(r *checkpoint.Record) string {
	var b []byte
	if r.Kind == "render" || r.Kind == "strict-publish" {
		names := slices.Sorted(maps.Keys(r.Outputs))
		b, _ = json.Marshal([]any{r.Status, r.Result, names, r.Gates})
	} else {
		b, _ = json.Marshal([]any{r.Status, r.Fingerprint, r.Result, r.Outputs, r.Digest, r.Gates})
	}
	return string(b)
}

// interpret runs the Workflow's entrypoint DAG; pod paths (artifacts, volume mounts) live
// under root. It returns how many attempts it killed and each task's exit code (its last
// attempt's). Only attempts with a retry left are killed.
func interpret(t *testing.T, m *wfManifest, root, wfName string, pods ...*podNet) (int, map[string]int) {
	t.Helper()
	tmpl := map[string]int{}
	for i, tp := range m.Spec.Templates {
		tmpl[tp.Name] = i
	}
	dag := m.Spec.Templates[tmpl[m.Spec.Entrypoint]].DAG
	if dag == nil {
		t.Fatal("entrypoint is not a DAG")
	}
	sub := func(s string, params map[string]string) string {
		s = strings.ReplaceAll(s, "{{workflow.name}}", wfName)
		for k, v := range params {
			s = strings.ReplaceAll(s, "{{inputs.parameters."+k+"}}", v)
		}
		return s
	}
	var mu sync.Mutex
	held := map[string]bool{}
	state := map[string]string{} // "" pending, running, ok, failed
	done := make(chan string)
	kills := 0
	codes := map[string]int{}
	env := []string{}
	if len(pods) > 0 {
		env = pods[0].secret
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	const workers = 2
	running := 0
	for {
		mu.Lock()
		for _, task := range dag.Tasks {
			if state[task.Name] != "" || running >= workers {
				continue
			}
			ready := true
			for _, d := range task.Dependencies {
				ready = ready && state[d] == "ok"
			}
			tp := m.Spec.Templates[tmpl[task.Template]]
			var locks []string
			for _, x := range tp.Synchronization.Mutexes {
				l := sub(x.Name, nil)
				locks = append(locks, l)
				ready = ready && !held[l]
			}
			if !ready {
				continue
			}
			for _, l := range locks {
				held[l] = true
			}
			state[task.Name] = "running"
			running++
			params := map[string]string{}
			for _, p := range task.Arguments.Parameters {
				params[p.Name] = p.Value
			}
			limit, _ := strconv.Atoi(tp.RetryStrategy.Limit)
			if tp.DAG != nil { // a cell split over client pods
				if len(pods) == 0 {
					t.Fatalf("template %s is a DAG: pass the interpreter a pod network", tp.Name)
				}
				go func(name string, locks []string) {
					ok, code := pods[0].runDAG(t, m, tmpl, tp, params, root, wfName, limit)
					mu.Lock()
					codes[name] = code
					for _, l := range locks {
						held[l] = false
					}
					state[name] = map[bool]string{true: "ok", false: "failed"}[ok]
					mu.Unlock()
					done <- name
				}(task.Name, locks)
				continue
			}
			local := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
			for _, a := range tp.Inputs.Artifacts {
				if err := os.MkdirAll(filepath.Dir(local(a.Path)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(local(a.Path), []byte(a.Raw.Data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var args []string
			for _, a := range tp.Container.Args {
				a = sub(a, params)
				if strings.HasPrefix(a, "/") {
					a = local(a)
				}
				args = append(args, a)
			}
			if len(tp.Container.Command) != 1 || tp.Container.Command[0] != "/perfdag" {
				t.Fatalf("template %s runs %v, want /perfdag", tp.Name, tp.Container.Command)
			}
			kill := min(rng.IntN(3), limit) // attempts of this task to kill
			delays := []time.Duration{time.Duration(rng.IntN(120)) * time.Millisecond, time.Duration(rng.IntN(60)) * time.Millisecond, 0}
			go func(name string, locks []string) {
				var ok bool
				for attempt := 0; attempt <= limit; attempt++ {
					cmd := perfdagChild(args...)
					cmd.Env = append(cmd.Env, env...)
					var out bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &out
					if err := cmd.Start(); err != nil {
						t.Errorf("%s: %v", name, err)
						break
					}
					if attempt < kill {
						time.AfterFunc(delays[attempt], func() { _ = cmd.Process.Kill() })
					}
					err := cmd.Wait()
					mu.Lock()
					codes[name] = cmd.ProcessState.ExitCode()
					mu.Unlock()
					if err == nil {
						ok = true
						break
					}
					mu.Lock()
					if attempt < kill {
						kills++
					} else if name != argo.OutcomeTask {
						t.Logf("%s attempt %d: %v\n%s", name, attempt, err, out.String())
					}
					mu.Unlock()
				}
				mu.Lock()
				for _, l := range locks {
					held[l] = false
				}
				if ok {
					state[name] = "ok"
				} else {
					state[name] = "failed"
				}
				mu.Unlock()
				done <- name
			}(task.Name, locks)
		}
		mu.Unlock()
		if running == 0 {
			break
		}
		<-done
		running--
	}
	for _, task := range dag.Tasks {
		if state[task.Name] == "" {
			t.Fatalf("task %s never ran", task.Name)
		}
	}
	return kills, codes
}
