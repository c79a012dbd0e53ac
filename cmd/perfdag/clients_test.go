package main

import (
	"bytes"
	"encoding/json"
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
	"github.com/perfdag/perfdag/steps/sim"
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

// truth is what the simulator really did for one point's requests: its TTFT (arrival to the
// first chunk's send) and ITL (first to last chunk's send over the gaps) means in ms, and its
// output token rate (tokens sent over the first arrival to the last end).
type truth struct {
	n                int
	ttftMs, itlMs    float64
	ttftP50Ms        float64
	outTokS, windowS float64
	// slipMs is how late the simulator's sends went out against its own plan, on average: the
	// machine's scheduling delay during the window, which the clients' stamps suffer too
	slipMs float64
}

// served reads the simulator's record of its streamed chat requests, in arrival order.
func (o *oracle) served(t *testing.T) []sim.Served {
	t.Helper()
	resp, err := http.Get(o.url + "/sim/served")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var all []sim.Served
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		t.Fatal(err)
	}
	var out []sim.Served
	for _, s := range all {
		if s.Stream {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

func truthOf(served []sim.Served) truth {
	tr := truth{n: len(served)}
	var first, last int64 = math.MaxInt64, 0
	tokens, itlN, slips := 0, 0, 0
	ttfts := make([]float64, 0, len(served))
	for _, s := range served {
		tr.ttftMs += float64(s.SentNs[0]-s.ArrivedNs) / 1e6
		ttfts = append(ttfts, float64(s.SentNs[0]-s.ArrivedNs)/1e6)
		if n := len(s.SentNs); n > 1 {
			tr.itlMs += float64(s.SentNs[n-1]-s.SentNs[0]) / 1e6 / float64(n-1)
			itlN++
		}
		tokens += s.SentTokens
		for k, sent := range s.SentNs {
			if k < len(s.DeadlineNs) {
				tr.slipMs += float64(sent-s.DeadlineNs[k]) / 1e6
				slips++
			}
		}
		first, last = min(first, s.ArrivedNs), max(last, s.EndNs)
	}
	tr.ttftMs /= float64(len(served))
	sort.Float64s(ttfts)
	tr.ttftP50Ms = ttfts[len(ttfts)/2]
	if len(ttfts)%2 == 0 {
		tr.ttftP50Ms = (ttfts[len(ttfts)/2-1] + ttfts[len(ttfts)/2]) / 2
	}
	tr.itlMs /= float64(itlN)
	tr.slipMs /= float64(max(slips, 1))
	tr.windowS = float64(last-first) / 1e9
	tr.outTokS = float64(tokens) / tr.windowS
	return tr
}

// simTTFTMs is the simulator's TTFT for the campaign's prompts: ttft_ms plus 64 tokens of
// prefill at its default 8 ms per 1,000 (no request of these loads queues).
const simTTFTMs = 30 + 64*8.0/1000

// busyMs is how late the simulator's sends may go out against its own plan, on average over a
// window, before the machine counts as too busy to compare two windows to 0.5 ms: its
// scheduler then delays the clients' reads by as much, and by more in one window than in the
// other (a shared 2-core machine at load 20 delays them by 2–9 ms).
const busyMs = 1

// attempts is how many campaigns a comparison may take when each differs on a busy machine.
const attempts = 3

// looseMs is what the clients' TTFT and ITL may differ by when every attempt missed 0.5 ms:
// two windows' medians compared unpaired moved by 0.7–0.8 ms between runs on this 2-core
// machine when quiet, and four client processes sharing its cores with another package's tests
// (CI) added 4 ms; the 0.5 ms bound is then logged, while this one (a clock shift applied
// wrongly moves a TTFT by far more), the counts and the throughput still hold.
const looseMs = 10

// tightOnly prefixes a difference beyond 0.5 ms but within looseMs.
const tightOnly = "(beyond 0.5 ms, within 10) "

// compare words how a split point's numbers differ from one client's at the same load, each
// against the simulator's truth for its own requests (on a shared machine the server's own
// timing moves between two windows by more than the bounds; what the clients add to it must
// not): TTFT (the median: one scheduler stall of a client process on a busy machine moves a
// mean by milliseconds) and ITL (the mean of each request's) within 0.5 ms, output token
// throughput within 2 %, request count exact.
// busy is set when the simulator itself fell behind its plan in either window.
func compare(split, one schema.Point, ts, to truth, requests int) (problems []string, busy string) {
	if split.RequestCount != requests || one.RequestCount != requests || split.NumPrompts != requests || split.ErrorCount != 0 || ts.n != requests || to.n != requests {
		return []string{fmt.Sprintf("requests: split %d of %d (%d errors, the simulator served %d), one client %d (served %d), want %d each",
			split.RequestCount, split.NumPrompts, split.ErrorCount, ts.n, one.RequestCount, to.n, requests)}, ""
	}
	if late := max(ts.slipMs, to.slipMs); late > busyMs {
		busy = fmt.Sprintf("the simulator's sends went out %.3f ms (split) and %.3f ms (one client) behind its plan on average", ts.slipMs, to.slipMs)
	}

	// no request waits in the simulator's queue: a TTFT is its ttft_ms and prefill, plus what
	// the loopback and the client add
	for name, c := range map[string]struct {
		p schema.Point
		t truth
	}{"split": {split, ts}, "one client": {one, to}} {
		// a sanity bound (a clock shift applied wrongly moves a TTFT by far more): on this
		// machine the simulator's own TTFT runs 2–3 ms past its model and the client adds 3–4 ms
		if c.p.TTFT.P50 < simTTFTMs || c.p.TTFT.P50 > c.t.ttftP50Ms+10 {
			problems = append(problems, fmt.Sprintf("%s: TTFT p50 %.3f ms, the simulator's is %.3f ms (its model's %.3f)", name, c.p.TTFT.P50, c.t.ttftP50Ms, simTTFTMs))
		}
	}
	for _, m := range []struct {
		name                 string
		got, gotT, ref, refT float64
	}{{"TTFT p50", split.TTFT.P50, ts.ttftP50Ms, one.TTFT.P50, to.ttftP50Ms}, {"ITL mean", split.ITL.Avg, ts.itlMs, one.ITL.Avg, to.itlMs}} {
		if d := (m.got - m.gotT) - (m.ref - m.refT); math.Abs(d) > 0.5 {
			tight := ""
			if math.Abs(d) <= looseMs {
				tight = tightOnly
			}
			problems = append(problems, tight+fmt.Sprintf("%s: %.3f ms over 4 clients (the simulator's %.3f), %.3f ms from one (its %.3f): the clients differ by %.3f ms, more than 0.5",
				m.name, m.got, m.gotT, m.ref, m.refT, d))
		}
	}
	if r := split.OutputTokenThroughput/ts.outTokS - one.OutputTokenThroughput/to.outTokS; math.Abs(r) > 0.02 {
		problems = append(problems, fmt.Sprintf("output token throughput: %.1f tok/s over 4 clients (the simulator's %.1f), %.1f from one (its %.1f): more than 2 %% apart",
			split.OutputTokenThroughput, ts.outTokS, one.OutputTokenThroughput, to.outTokS))
	}
	return problems, busy
}

// untilCompared runs attempt until its numbers compare, measuring again (up to attempts
// campaigns) only when they differ on a machine the simulator found busy; a difference on a
// quiet machine fails at once, unless it is a TTFT or ITL difference within looseMs (measured
// again too); after attempts campaigns such a difference is logged, every other one fails.
func untilCompared(t *testing.T, attempt func(*testing.T) (problems []string, busy string)) {
	for a := 1; ; a++ {
		problems, busy := attempt(t)
		if t.Failed() || len(problems) == 0 {
			return
		}
		tightOnlyMisses := true
		for _, p := range problems {
			tightOnlyMisses = tightOnlyMisses && strings.HasPrefix(p, tightOnly)
		}
		if tightOnlyMisses && busy == "" {
			// two windows' medians, unpaired, move by up to ~0.8 ms on a quiet 2-core machine
			busy = "a difference within 10 ms (two windows' medians, cores shared)"
		}
		if busy == "" || a == attempts {
			for _, p := range problems {
				if busy != "" && strings.HasPrefix(p, tightOnly) {
					t.Logf("not checkable on a machine this busy: %s", p)
					continue
				}
				t.Error(p)
			}
			if busy != "" {
				t.Logf("%d campaigns, each on a machine too busy to compare two windows to 0.5 ms; the last: %s", attempts, busy)
			}
			return
		}
		t.Logf("attempt %d: %s — on a busy machine (%s); measuring again", a, strings.Join(problems, "; "), busy)
	}
}

// logCompared logs both points beside the simulator's truth.
func logCompared(t *testing.T, split, one schema.Point, ts, to truth) {
	t.Logf("4 clients vs one (simulator's truth): TTFT mean %.3f (%.3f) / %.3f (%.3f) ms, p50 %.3f (%.3f) / %.3f (%.3f), ITL mean %.3f (%.3f) / %.3f (%.3f) ms, %.1f (%.1f) / %.1f (%.1f) tok/s; the simulator's sends %.3f / %.3f ms late",
		split.TTFT.Avg, ts.ttftMs, one.TTFT.Avg, to.ttftMs, split.TTFT.P50, ts.ttftP50Ms, one.TTFT.P50, to.ttftP50Ms, split.ITL.Avg, ts.itlMs, one.ITL.Avg, to.itlMs,
		split.OutputTokenThroughput, ts.outTokS, one.OutputTokenThroughput, to.outTokS, ts.slipMs, to.slipMs)
}

// truthFor is the simulator's truth for a point's requests: those it received inside the
// point's window (its records' first start to last end; the simulator stamps on the same
// machine's clock, read by another process).
func truthFor(t *testing.T, served []sim.Served, recs []schema.RequestRecord) truth {
	t.Helper()
	var first, last int64 = math.MaxInt64, 0
	for _, r := range recs {
		first, last = min(first, r.StartNs), max(last, r.EndNs)
	}
	var in []sim.Served
	for _, s := range served {
		if s.ArrivedNs >= first-int64(time.Millisecond) && s.ArrivedNs <= last {
			in = append(in, s)
		}
	}
	if len(in) == 0 {
		t.Fatalf("the simulator received no request in the window %d…%d", first, last)
	}
	return truthOf(in)
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
func splitAttempt(t *testing.T) (problems []string, busy string) {
	root := t.TempDir()
	yaml, dir := filepath.Join(root, "c.yaml"), filepath.Join(root, "d")
	const requests = 320
	o := startOracle(t, 5)
	if err := os.WriteFile(yaml, fmt.Appendf(nil, clientsCampaign, o.url, 32, 16, requests), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := perfdagChild("run", yaml, "--out", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	l := schema.Conc(16)
	split, one := readPoint(t, dir, "split", l), readPoint(t, dir, "one", l)
	served := o.served(t)
	ts, to := truthFor(t, served, shardRecords(t, dir, campaigndir.Records("split", l))), truthFor(t, served, shardRecords(t, dir, campaigndir.Records("one", l)))
	logCompared(t, split, one, ts, to)
	problems, busy = compare(split, one, ts, to, requests)
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
	return problems, busy
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
func killAttempt(t *testing.T) (problems []string, busy string) {
	root := t.TempDir()
	yaml, dir := filepath.Join(root, "c.yaml"), filepath.Join(root, "d")
	const requests = 96
	o := startOracle(t, 10)
	if err := os.WriteFile(yaml, fmt.Appendf(nil, clientsCampaign, o.url, 64, 8, requests), 0o644); err != nil {
		t.Fatal(err)
	}
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
	served := o.served(t)
	ts, to := truthFor(t, served, shardRecords(t, dir, campaigndir.Records("split", l))), truthFor(t, served, shardRecords(t, dir, campaigndir.Records("one", l)))
	logCompared(t, split, one, ts, to)
	problems, busy = compare(split, one, ts, to, requests)
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
	return problems, busy
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
