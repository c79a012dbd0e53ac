package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// wfManifest is the part of an exported Workflow the interpreter reads.
type wfManifest struct {
	Spec struct {
		Entrypoint string `yaml:"entrypoint"`
		Templates  []struct {
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
			DAG           *struct {
				Tasks []struct {
					Name         string   `yaml:"name"`
					Template     string   `yaml:"template"`
					Dependencies []string `yaml:"dependencies"`
					Arguments    struct {
						Parameters []struct{ Name, Value string } `yaml:"parameters"`
					} `yaml:"arguments"`
				} `yaml:"tasks"`
			} `yaml:"dag"`
			Container struct {
				Command      []string `yaml:"command"`
				Args         []string `yaml:"args"`
				VolumeMounts []struct {
					MountPath string `yaml:"mountPath"`
				} `yaml:"volumeMounts"`
			} `yaml:"container"`
		} `yaml:"templates"`
	} `yaml:"spec"`
}

// An exported Workflow run task by task as local processes — two workers, a task starts only
// when its dependencies succeeded and every mutex its template names is free (as Argo's
// controller does), attempts SIGKILLed at random and retried up to retryStrategy.limit — ends
// with the same checkpoints (status, fingerprint, result, outputs' digests, gate verdicts) as
// one `perfdag run`. The campaign's steps are exec steps with deterministic output, so the
// comparison is exact.
func TestArgoWorkflowInterpreted(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns perfdag processes")
	}
	root := t.TempDir()
	file := filepath.Join(root, "crash.yaml")
	if err := os.WriteFile(file, []byte(crashCampaign), 0o644); err != nil {
		t.Fatal(err)
	}
	refDir := filepath.Join(root, "ref")
	if out, err := perfdagChild("run", file, "--out", refDir).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	var m wfManifest
	if err := yaml.Unmarshal(exportArgo(t, file, "--retries", "6"), &m); err != nil {
		t.Fatal(err)
	}
	kills := interpret(t, &m, filepath.Join(root, "pod"), "wf-test")
	got := finalState(t, filepath.Join(root, "pod", "campaigns", "wf-test"))
	want := finalState(t, refDir)
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for id, w := range want {
		g := got[id]
		if g == nil {
			t.Errorf("%s missing", id)
			continue
		}
		gj, _ := json.Marshal([]any{g.Status, g.Fingerprint, g.Result, g.Outputs, g.Digest, g.Gates})
		wj, _ := json.Marshal([]any{w.Status, w.Fingerprint, w.Result, w.Outputs, w.Digest, w.Gates})
		if !bytes.Equal(gj, wj) {
			t.Errorf("%s differs:\n got %s\nwant %s", id, gj, wj)
		}
	}
	t.Logf("%d records equal after %d SIGKILLs", len(want), kills)
}

// interpret runs the Workflow's entrypoint DAG; pod paths (artifacts, volume mounts) live
// under root. It returns how many attempts it killed.
func interpret(t *testing.T, m *wfManifest, root, wfName string) int {
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
			kill := rng.IntN(3) // attempts of this task to kill
			delays := []time.Duration{time.Duration(rng.IntN(120)) * time.Millisecond, time.Duration(rng.IntN(60)) * time.Millisecond, 0}
			go func(name string, locks []string) {
				var ok bool
				for attempt := 0; attempt <= limit; attempt++ {
					cmd := perfdagChild(args...)
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
					if err == nil {
						ok = true
						break
					}
					mu.Lock()
					if attempt < kill {
						kills++
					} else {
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
		if state[task.Name] != "ok" {
			t.Fatalf("task %s ended %q", task.Name, state[task.Name])
		}
	}
	return kills
}
