package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/perfdag/perfdag/engine/argo"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// podNet is what the interpreter needs for DAG templates of client pods: a pod network —
// every daemon pod of attempt a gets its own loopback address 127.77.<a+1>.<k+1>, where its
// `--listen :PORT` binds and `{{tasks.<name>.ip}}` points — and the Secret, in every pod's
// environment. kill, when set, sees each DAG attempt's daemon processes once they are ready.
type podNet struct {
	secret []string
	kill   func(attempt int, daemons []*exec.Cmd)

	mu       sync.Mutex
	attempts int
	log      strings.Builder // what the DAGs' run tasks printed
}

// runDAG runs a DAG template as Argo does, retried as a whole up to limit while a task of
// it fails.
func (n *podNet) runDAG(t *testing.T, m *wfManifest, tmpl map[string]int, tp wfTemplate, params map[string]string, root, wfName string, limit int) (ok bool, code int) {
	for range limit + 1 {
		if ok, code = n.attempt(t, m, tmpl, tp, params, root, wfName); ok {
			return ok, code
		}
	}
	return false, code
}

func (n *podNet) attempt(t *testing.T, m *wfManifest, tmpl map[string]int, tp wfTemplate, params map[string]string, root, wfName string) (bool, int) {
	n.mu.Lock()
	a := n.attempts
	n.attempts++
	n.mu.Unlock()
	local := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	ips := map[string]string{}
	var daemons []*exec.Cmd
	var exited []chan struct{}
	for _, task := range tp.DAG.Tasks {
		dt := m.Spec.Templates[tmpl[task.Template]]
		if !dt.Daemon {
			continue
		}
		ip := fmt.Sprintf("127.77.%d.%d", a+1, len(daemons)+1)
		var args []string
		for _, arg := range dt.Container.Args {
			if strings.HasPrefix(arg, ":") { // every address of the pod: its own
				arg = ip + arg
			}
			args = append(args, arg)
		}
		cmd := perfdagChild(args...)
		cmd.Env = append(cmd.Env, n.secret...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		daemons, exited, ips[task.Name] = append(daemons, cmd), append(exited, done), ip
		// ready once it listens, as its readiness probe sees it
		port := strconv.Itoa(dt.Container.Ports[0].ContainerPort)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if c, err := net.Dial("tcp", net.JoinHostPort(ip, port)); err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("client pod %s never listened on %s:%s", task.Name, ip, port)
			}
		}
	}
	if n.kill != nil {
		go n.kill(a, daemons)
	}
	ok, code := true, 0
	for _, task := range tp.DAG.Tasks {
		rt := m.Spec.Templates[tmpl[task.Template]]
		if rt.Daemon {
			continue
		}
		for _, d := range task.Dependencies {
			if ips[d] == "" {
				t.Fatalf("task %s waits for %s, not a client pod of its DAG", task.Name, d)
			}
		}
		own := map[string]string{}
		for _, p := range task.Arguments.Parameters {
			v := p.Value
			for k, x := range params {
				v = strings.ReplaceAll(v, "{{inputs.parameters."+k+"}}", x)
			}
			for name, ip := range ips {
				v = strings.ReplaceAll(v, "{{tasks."+name+".ip}}", ip)
			}
			own[p.Name] = v
		}
		for _, art := range rt.Inputs.Artifacts {
			if err := os.MkdirAll(filepath.Dir(local(art.Path)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(local(art.Path), []byte(art.Raw.Data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var args []string
		for _, arg := range rt.Container.Args {
			arg = strings.ReplaceAll(arg, "{{workflow.name}}", wfName)
			for k, v := range own {
				arg = strings.ReplaceAll(arg, "{{inputs.parameters."+k+"}}", v)
			}
			if strings.HasPrefix(arg, "/") {
				arg = local(arg)
			}
			args = append(args, arg)
		}
		limit, _ := strconv.Atoi(rt.RetryStrategy.Limit)
		for range limit + 1 {
			cmd := perfdagChild(args...)
			cmd.Env = append(cmd.Env, n.secret...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			code = cmd.ProcessState.ExitCode()
			n.mu.Lock()
			fmt.Fprintf(&n.log, "== %s attempt %d of its DAG: exit %d\n%s", task.Name, a, code, out.String())
			n.mu.Unlock()
			if err == nil {
				break
			}
		}
		ok = ok && code == 0
	}
	// the DAG is over: its daemons are stopped. One that had died does not fail it (Argo 3
	// reports a failed daemon as succeeded): the run task's exit is what fails it.
	for k, d := range daemons {
		select {
		case <-exited[k]:
		default:
			_ = d.Process.Kill()
			<-exited[k]
		}
	}
	return ok, code
}

// TestArgoWorkflowClientPods (issue 30 item 4): the exported Workflow of a campaign whose
// cell splits its points over 2 client pods, interpreted with its pods as processes on their
// own loopback addresses (other tasks' attempts SIGKILLed at random and retried), measures
// every point; one client pod SIGKILLed while a point runs fails that point — the run task
// names the pod's address — and the run task exits 1, failing its DAG (the daemon's own death
// does not: Argo 3 reports it succeeded); the DAG's retry starts two new pods and measures
// again, whole, the failed point and those after it, reusing those before; the workflow ends
// as one run would have (every task 0, every node succeeded).
func TestArgoWorkflowClientPods(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns perfdag processes as pods")
	}
	o := startOracle(t, 10)
	root := t.TempDir()
	const requests = 40
	file := propWrite(t, filepath.Join(root, "src"), fmt.Sprintf(shardedCampaign, o.url, 2, 64, requests))
	manifest := exportArgo(t, file)
	validateArgo(t, manifest)
	var m wfManifest
	if err := yaml.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	pod := filepath.Join(root, "pod")
	dir := filepath.Join(pod, "campaigns", "wf-clients")
	var tok [32]byte
	_, _ = rand.Read(tok[:])
	var victim string
	pn := &podNet{secret: []string{argo.ShardTokenEnv + "=" + hex.EncodeToString(tok[:])}}
	pn.kill = func(attempt int, daemons []*exec.Cmd) {
		if attempt != 0 {
			return
		}
		for deadline := time.Now().Add(time.Minute); !nodeStarted(dir, "run-shape[split/c8]"); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Error("run-shape[split/c8] never started")
				return
			}
		}
		time.Sleep(1500 * time.Millisecond) // inside the point (about 5 rounds of 0.7 s after its warm-up)
		victim = fmt.Sprint(daemons[1].Process.Pid)
		_ = daemons[1].Process.Signal(syscall.SIGKILL)
	}
	_, codes := interpret(t, &m, pod, "wf-clients", pn)
	log := pn.log.String()
	for task, code := range codes {
		if code != 0 {
			t.Errorf("task %s exited %d, want 0\n%s", task, code, log)
		}
	}
	if pn.attempts != 2 || victim == "" {
		t.Fatalf("%d attempts of the split cell's DAG (pod %q killed), want 2: the first failed by the kill\n%s", pn.attempts, victim, log)
	}
	if !strings.Contains(log, "== run attempt 0 of its DAG: exit 1\n") || !strings.Contains(log, "failed with one of its clients: this task fails, for its workflow to retry the slice with new client pods") {
		t.Errorf("the first run task does not fail with its client:\n%s", log)
	}
	failed := regexp.MustCompile(`failed  run-shape\[split/(c\d)\] .*client 1 .*127\.77\.1\.2:7070.*the point is failed, not computed short of its load`).FindStringSubmatch(log)
	if failed == nil {
		t.Fatalf("the first attempt does not fail a split point naming client 1's pod address:\n%s", log)
	}
	starts := map[string]int{}
	evs, err := events.Read(campaigndir.Events(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == events.NodeStart {
			starts[e.Node]++
		}
	}
	// the failed point and the slice's later ones (their connections refused by the dead pod)
	// are measured again on the retry; a point finished before the kill is reused
	for _, l := range []string{"c4", "c8"} {
		node, want := "run-shape[split/"+l+"]", 1
		if l >= failed[1] {
			want = 2
		}
		if starts[node] != want {
			t.Errorf("%s started %d times, want %d (%v)", node, starts[node], want, starts)
		}
	}
	for id, r := range finalState(t, dir) {
		if r.Status != "succeeded" {
			t.Errorf("%s: %s", id, r.Status)
		}
	}
	for _, c := range []int{4, 8} {
		l := schema.Conc(c)
		p := readPoint(t, dir, "split", l)
		if n := len(shardRecords(t, dir, campaigndir.Records("split", l))); n != requests || p.Clients == nil || p.Clients.N != 2 {
			t.Errorf("split c%d: %d records over %+v, want %d over 2 clients", c, n, p.Clients, requests)
			continue
		}
		for k, s := range p.Clients.Shards {
			if n := len(shardRecords(t, dir, s.Records)); n != requests/2 || s.ClockRTTNs <= 0 {
				t.Errorf("split c%d shard %d: %d records, clock round trip %d ns; want %d and a measured clock", c, k, n, s.ClockRTTNs, requests/2)
			}
		}
	}
	if strings.Contains(log, pn.secret[0][len(argo.ShardTokenEnv)+1:]) {
		t.Error("the token appears in the run tasks' output")
	}
	t.Logf("client pod (pid %s) killed during run-shape[split/%s]; re-measured on the DAG's retry; %v", victim, failed[1], starts)
	t.Log(failed[0])
}

// nodeStarted says whether the campaign directory's event log shows node starting.
func nodeStarted(dir, node string) bool {
	evs, err := events.Read(campaigndir.Events(dir))
	if err != nil {
		return false
	}
	for _, e := range evs {
		if e.Type == events.NodeStart && e.Node == node {
			return true
		}
	}
	return false
}
