package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// clientsCampaign measures one load twice against the simulator, served from its own process
// (the oracle: it records what it really did for every request): cell split over 4 client
// processes, cell one from the run's own process alone.
const clientsCampaign = `version: 1
campaign: clients
kind: latency
endpoints:
  sim: {url: "%[1]s", model: m}
cells:
  - id: split
    workload: {shape: custom, input_tokens: 64, output_tokens: %[2]d}
    concurrencies: [%[3]d]
    requests_per_point: %[4]d
    clients: 4
  - id: one
    workload: {shape: custom, input_tokens: 64, output_tokens: %[2]d}
    concurrencies: [%[3]d]
    requests_per_point: %[4]d
`

// oracle is the simulator in its own process (perfdag sim), as calibrate starts it.
type oracle struct {
	url string
	cmd *exec.Cmd
}

func startOracle(t *testing.T, tpotMs int) *oracle {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "sim.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "ttft_ms: 30\ntpot_ms: %d\nseed: 3\n", tpotMs), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	o := &oracle{url: "http://" + ln.Addr().String(), cmd: perfdagChild("sim", "--listen-fd", "3", "--model", "m", "--config", cfg)}
	o.cmd.ExtraFiles = []*os.File{f}
	if err := o.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = ln.Close()
	_ = f.Close()
	t.Cleanup(func() { _ = o.cmd.Process.Kill(); _ = o.cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(o.url + "/health"); err == nil {
			resp.Body.Close()
			return o
		}
		if time.Now().After(deadline) {
			t.Fatal("the simulator did not answer within 30 s")
		}
	}
}

func readPoint(t *testing.T, dir, cell string, l schema.Load) schema.Point {
	t.Helper()
	var p schema.Point
	if found, err := campaigndir.ReadJSON(dir, campaigndir.Point(cell, l), &p); !found || err != nil {
		t.Fatalf("%s point %s: found %v, %v", cell, l.Key(), found, err)
	}
	return p
}

// shardRecords reads a records file of a campaign directory by its path.
func shardRecords(t *testing.T, dir, rel string) []schema.RequestRecord {
	t.Helper()
	var recs []schema.RequestRecord
	if err := campaigndir.ScanLines(dir, rel, 64<<20, func(_ int, r *schema.RequestRecord) error {
		recs = append(recs, *r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestClientsSplitMatchesOneClient (issue 30 item 3): c16 split over 4 client processes — 4
// streams and 80 requests each, every one a child perfdag started together — measures what
// one client measures at c16 against the same simulator; each shard's records are its own
// client's stamps, and the point's records and window are theirs moved by the clock offsets
// point.json records (the window the union of the shards' windows).
func TestClientsSplitMatchesOneClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign of 4 client processes")
	}
	untilCompared(t, splitAttempt)
}

// splitAttempt runs the campaign once and checks it, returning how its numbers differ
// (compare) for untilCompared.
func splitAttempt(t *testing.T) (problems, timing []string, busy string) {
	const requests = 320
	o, yaml, dir := clientsSetup(t, 5, 32, 16, requests)
	out, err := perfdagChild("run", yaml, "--out", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	l := schema.Conc(16)
	split, one := readPoint(t, dir, "split", l), readPoint(t, dir, "one", l)
	problems, timing, busy = comparePoints(t, o, dir, l, 32, requests, split, one)
	if one.Clients != nil {
		t.Errorf("the one-client point has a clients block: %+v", one.Clients)
	}
	c := split.Clients
	if c == nil || c.N != 4 || len(c.Shards) != 4 || c.Method != schema.ClockMethodPipePing || c.StartNs == 0 {
		t.Fatalf("clients: %+v", c)
	}
	if !regexp.MustCompile(`run-shape\[split/c16\] c16: 320/320 ok, .*; 4 clients, clock offsets up to \S+ ± \S+, started within \S+ of the agreed start`).Match(out) {
		t.Errorf("the split point's run line does not say its clients:\n%s", out)
	}
	merged := shardRecords(t, dir, campaigndir.Records("split", l))
	if len(merged) != requests {
		t.Fatalf("records.jsonl: %d records, want %d", len(merged), requests)
	}
	var first, last int64 = math.MaxInt64, 0
	for k, s := range c.Shards {
		if s.Index != k || s.Requests != 80 || s.Concurrency != 4 || s.IndexFrom != 80*k || s.Records != campaigndir.ShardRecords("split", l, k) {
			t.Errorf("shard %d: %+v, want 80 requests from %d at c4 in its own file", k, s, 80*k)
		}
		// on one machine the clocks are one clock read twice: the measured offset is within
		// the exchange's uncertainty (half its round trip) and a millisecond
		if s.ClockRTTNs <= 0 || math.Abs(float64(s.ClockOffsetNs)) > float64(s.ClockRTTNs)/2+float64(time.Millisecond) {
			t.Errorf("shard %d: clock offset %d ns from a %d ns round trip", k, s.ClockOffsetNs, s.ClockRTTNs)
		}
		if s.ClientBound == nil || s.StartLateNs < 0 {
			t.Errorf("shard %d: no client verdict or a start before the agreed one: %+v", k, s)
		}
		own := shardRecords(t, dir, s.Records)
		if len(own) != 80 {
			t.Fatalf("shard %d: %d records, want 80", k, len(own))
		}
		for _, r := range own {
			if r.Index < 80*k || r.Index >= 80*(k+1) {
				t.Fatalf("shard %d holds request %d", k, r.Index)
			}
			m := merged[r.Index]
			if m.Index != r.Index || m.StartNs != r.StartNs-s.ClockOffsetNs || m.EndNs != r.EndNs-s.ClockOffsetNs || m.FirstTokenNs-m.StartNs != r.FirstTokenNs-r.StartNs {
				t.Fatalf("request %d: merged %d…%d, shard %d has %d…%d with offset %d", r.Index, m.StartNs, m.EndNs, k, r.StartNs, r.EndNs, s.ClockOffsetNs)
			}
			first, last = min(first, r.StartNs-s.ClockOffsetNs), max(last, r.LastContentNs-s.ClockOffsetNs)
			if r.StartNs-s.ClockOffsetNs < c.StartNs {
				t.Errorf("request %d left at %d, before the agreed start %d", r.Index, r.StartNs-s.ClockOffsetNs, c.StartNs)
			}
		}
	}
	if got, want := split.WindowS, float64(last-first)/1e9; math.Abs(got-want) > 1e-9 {
		t.Errorf("window %.9f s, want the union of the shards' windows (first start to last content) %.9f s", got, want)
	}
	return problems, timing, busy
}

// shardChildren lists the pids of the `perfdag shard` children of pid.
func shardChildren(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so read after its closing paren
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) && bytes.HasSuffix(cmdline, []byte("\x00shard\x00")) {
			out = append(out, child)
		}
	}
	sort.Ints(out)
	return out
}

// TestClientsShardKilledResume (issue 30 item 3): SIGKILL of one of a point's 4 client
// processes fails the point — the run exits 1 naming the client and its signal, and writes no
// point nor records for it — and the first resume re-measures that point alone (the one-client
// cell is reused) to the numbers one client measures.
func TestClientsShardKilledResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign of 4 client processes, kills one, resumes")
	}
	if runtime.GOOS != "linux" {
		t.Skip("finds the client processes in /proc")
	}
	untilCompared(t, killAttempt)
}

// killAttempt runs the campaign, kills a client, resumes and checks it all, returning how the
// resumed point's numbers differ from one client's (compare) for untilCompared.
func killAttempt(t *testing.T) (problems, timing []string, busy string) {
	const requests = 96
	o, yaml, dir := clientsSetup(t, 10, 64, 8, requests)
	run := perfdagChild("run", yaml, "--out", dir)
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	var kids []int
	for deadline := time.Now().Add(time.Minute); len(kids) < 4; {
		if time.Now().After(deadline) {
			_ = run.Process.Kill()
			_ = run.Wait()
			t.Fatalf("no 4 shard children within a minute (saw %v):\n%s", kids, out.String())
		}
		time.Sleep(20 * time.Millisecond)
		kids = shardChildren(run.Process.Pid)
	}
	time.Sleep(time.Second) // inside the window (the point lasts about 12 rounds of 0.7 s)
	victim := kids[2]
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := run.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitFailed {
		t.Fatalf("run after a shard's SIGKILL: %v, want exit %d\n%s", err, ExitFailed, out.String())
	}
	l := schema.Conc(8)
	text := out.String()
	want := regexp.MustCompile(`failed  run-shape\[split/c8\] c8 over 4 clients: client \d \(pid ` + strconv.Itoa(victim) + `\) failed: signal: killed; the point is failed, not computed short of its load \(resume measures it again\)`)
	if !want.MatchString(text) || !strings.Contains(text, "ran     run-shape[one/c8] c8: 96/96 ok") ||
		!strings.Contains(text, ": 3 ran, 1 failed\n") || !strings.Contains(text, "perfdag: 1 step failed") {
		t.Fatalf("run output does not fail the split point alone, naming the killed client %d:\n%s", victim, text)
	}
	for _, rel := range []string{campaigndir.Point("split", l), campaigndir.Records("split", l)} {
		if _, err := os.Stat(campaigndir.Abs(dir, rel)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after the failed point: %v, want none", rel, err)
		}
	}
	one := readPoint(t, dir, "one", l)

	res, err := perfdagChild("resume", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, res)
	}
	text = string(res)
	for _, line := range []string{
		"start   run-shape[split/c8] (last attempt failed)",
		"start   aggregate (upstream run-shape[split/c8] re-runs)",
		": 3 ran, 1 reused\n",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("resume output lacks %q:\n%s", line, text)
		}
	}
	if !regexp.MustCompile(`ran     run-shape\[split/c8\] c8: 96/96 ok, .*; 4 clients, clock offsets`).MatchString(text) ||
		strings.Contains(text, "run-shape[one/c8]") || strings.Contains(text, "failed  ") {
		t.Errorf("resume does not re-measure the split point alone, whole:\n%s", text)
	}
	split := readPoint(t, dir, "split", l)
	problems, timing, busy = comparePoints(t, o, dir, l, 64, requests, split, one)
	if again := readPoint(t, dir, "one", l); again.TTFT.Avg != one.TTFT.Avg || again.WindowS != one.WindowS {
		t.Errorf("the one-client point changed on resume")
	}
	if n := len(shardRecords(t, dir, campaigndir.Records("split", l))); n != requests {
		t.Errorf("records.jsonl after resume: %d, want %d", n, requests)
	}
	total := 0
	for k, s := range split.Clients.Shards {
		n := len(shardRecords(t, dir, s.Records))
		if n != s.Requests || s.Requests != requests/4 {
			t.Errorf("shard %d: %d records of its %d, want %d", k, n, s.Requests, requests/4)
		}
		total += n
	}
	if total != requests {
		t.Errorf("shards hold %d records, want %d", total, requests)
	}
	st, err := perfdagChild("status", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(st), "): 4 succeeded\n") {
		t.Errorf("status after resume: %v\n%s", err, st)
	}
	return problems, timing, busy
}

// TestClientsSplitOpenLoop (issue 30 item 3): an open-loop point r40-cap8 over 4 clients is 4
// arrival streams of 10/s, each with its own seed and 2 of the cap's slots, the constant
// streams phased a quarter of their gap apart; merged, the point scheduled its 120 sends at
// the asked 40/s.
func TestClientsSplitOpenLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign of 4 client processes")
	}
	root := t.TempDir()
	yaml, dir := filepath.Join(root, "c.yaml"), filepath.Join(root, "d")
	if err := os.WriteFile(yaml, []byte(`version: 1
campaign: open
kind: latency
endpoints:
  sim: {url: "sim://", model: m, sim: {ttft_ms: 20, tpot_ms: 2}}
cells:
  - id: a
    workload: {shape: custom, input_tokens: 64, output_tokens: 16, arrival: constant, seed: 5}
    rates: [40]
    max_in_flight: 8
    requests_per_point: 120
    clients: 4
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := perfdagChild("run", yaml, "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	l := schema.RateAt(40, 8)
	p := readPoint(t, dir, "a", l)
	ol := p.OpenLoop
	if p.NumPrompts != 120 || ol == nil || ol.Sends != 120 || ol.AskedRate != 40 || ol.InFlightCap != 8 || math.Abs(ol.ScheduledRate/40-1) > 0.02 {
		t.Fatalf("point: %d prompts, open loop %+v; want 120 sends scheduled at 40/s", p.NumPrompts, ol)
	}
	if p.Clients == nil || len(p.Clients.Shards) != 4 {
		t.Fatalf("clients: %+v", p.Clients)
	}
	for k, s := range p.Clients.Shards {
		if s.RequestRate != 10 || s.Concurrency != 2 || s.Seed != 5+int64(k) || s.Requests != 30 || s.IndexFrom != 30*k {
			t.Errorf("client %d: %+v, want 30 requests at 10/s with 2 slots and seed %d", k, s, 5+k)
		}
		recs := shardRecords(t, dir, s.Records)
		sort.Slice(recs, func(i, j int) bool { return recs[i].ScheduledNs < recs[j].ScheduledNs })
		// its stream began no sooner than a quarter of a gap per client after the agreed start
		if first := recs[0].ScheduledNs - s.ClockOffsetNs; first < p.Clients.StartNs+int64(k)*25e6 {
			t.Errorf("client %d: first send scheduled %d ns after the agreed start, want at least %d", k, first-p.Clients.StartNs, int64(k)*25e6)
		}
		for i := 1; i < len(recs); i++ {
			// each client's own stream is constant at 10/s on its own clock
			if gap := recs[i].ScheduledNs - recs[i-1].ScheduledNs; math.Abs(float64(gap)-1e8) > 1e3 {
				t.Fatalf("client %d: sends %d and %d scheduled %d ns apart, want 100 ms", k, i-1, i, gap)
			}
		}
	}
}
