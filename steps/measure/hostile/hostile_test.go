package hostile_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/hostile"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/stats"
	"github.com/perfdag/perfdag/steps/testkit"
)

// childEnv carries a load job (JSON) when the test binary re-executes itself: the load runs
// in a process of its own, so its peak RSS (VmHWM) counts the client and nothing else.
const childEnv = "PERFDAG_HOSTILE_LOAD"

// key is the bearer key the client sends; it must never reach Elsewhere or a record.
const key = "sk-hostile-test-key-0123456789"

// requestTimeout is the per-request timeout of the harness: trickles and stalls end there.
const requestTimeout = 3 * time.Second

// maxRSS is the bound on the load process's peak resident set.
const maxRSS = 200 << 20

type job struct {
	Base string `json:"base"`
	Cs   []int  `json:"cs"`
}

type pointResult struct {
	C       int                    `json:"c"`
	Records []schema.RequestRecord `json:"records"`
	VmHWM   int64                  `json:"vmhwm_bytes"` // peak RSS of the process so far
}

func TestMain(m *testing.M) { testkit.ChildMain(m, childEnv, runLoad) }

// requestsPer is the point size at concurrency c: half the requests valid, half hostile.
func requestsPer(c int) int { return 2 * max(c, 2) }

// runLoad is the child: one point per concurrency, each followed by a VmHWM reading.
func runLoad(raw string) error {
	var j job
	if err := json.Unmarshal([]byte(raw), &j); err != nil {
		return fmt.Errorf("job: %w", err)
	}
	cl, err := openai.New(openai.Options{BaseURL: j.Base, APIKey: key, Timeout: requestTimeout})
	if err != nil {
		return err
	}
	defer cl.Close()
	send := func(ctx context.Context, i int) schema.RequestRecord {
		id := "bad-" + strconv.Itoa(i)
		if i%2 == 0 {
			id = "ok-" + strconv.Itoa(i)
		}
		b := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":8}`)
		return cl.Stream(ctx, openai.Request{Index: i, Phase: stats.PhaseProfiling, ID: id, Body: b}).Record
	}
	enc := json.NewEncoder(os.Stdout)
	for _, c := range j.Cs {
		recs, err := loadgen.Run(context.Background(), loadgen.Config{Requests: requestsPer(c), Concurrency: c}, send, nil)
		if err != nil {
			return err
		}
		hwm, err := vmHWM()
		if err != nil {
			return err
		}
		if err := enc.Encode(pointResult{C: c, Records: recs, VmHWM: hwm}); err != nil {
			return err
		}
	}
	return nil
}

// vmHWM reads this process's peak resident set from /proc/self/status.
func vmHWM() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("read VmHWM: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			f := strings.Fields(rest)
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil || len(f) != 2 || f[1] != "kB" {
				return 0, fmt.Errorf("VmHWM line %q", sc.Text())
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// wantClass is the error class every hostile request of a mode must end with.
var wantClass = map[hostile.Mode]string{
	hostile.EndlessData: schema.ErrorOversized,
	hostile.EndlessHTML: schema.ErrorNotSSE,
	hostile.Redirect302: schema.ErrorRedirect,
	hostile.Redirect307: schema.ErrorRedirect,
	hostile.Gzip:        schema.ErrorEncoding,
	hostile.RateLimit:   schema.ErrorRateLimit,
	hostile.ServerError: schema.ErrorHTTP,
	hostile.HTMLPage:    schema.ErrorNotSSE,
	hostile.BadJSON:     schema.ErrorMalformed,
	hostile.Reset:       schema.ErrorDropped,
	hostile.Trickle:     schema.ErrorTimeout,
	hostile.Stall:       schema.ErrorTimeout,
}

// TestHostileServers runs a point at c = 1 and c = 8 against each mode, the load in a child
// process: every hostile request ends within its timeout with the mode's class, every valid
// one is valid, the point's statistics cover the valid requests only, the key never reaches
// another port, and the load's peak RSS stays under 200 MB.
func TestHostileServers(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc/self/status for VmHWM")
	}
	for _, mode := range hostile.Modes {
		want, ok := wantClass[mode]
		if !ok {
			t.Fatalf("mode %s has no expected class", mode)
		}
		t.Run(string(mode), func(t *testing.T) {
			s := &hostile.Server{Mode: mode}
			other := httptest.NewServer(s.ElsewhereHandler())
			defer other.Close()
			s.Elsewhere = other.URL
			srv := httptest.NewServer(s)
			defer srv.Close()
			for _, p := range runChild(t, job{Base: srv.URL, Cs: []int{1, 8}}) {
				checkPoint(t, mode, want, p)
			}
			if h, k := s.Hits.Load(), s.KeyHits.Load(); h != 0 || k != 0 {
				t.Errorf("the other port got %d requests, %d with the key; want none", h, k)
			}
		})
	}
}

func checkPoint(t *testing.T, mode hostile.Mode, want string, p pointResult) {
	t.Helper()
	n := requestsPer(p.C)
	t.Logf("%s c=%d: peak RSS %.1f MB", mode, p.C, float64(p.VmHWM)/(1<<20))
	if p.VmHWM <= 0 || p.VmHWM >= maxRSS {
		t.Errorf("c=%d: peak RSS %d bytes, want under %d", p.C, p.VmHWM, maxRSS)
	}
	if len(p.Records) != n {
		t.Fatalf("c=%d: %d records, want %d", p.C, len(p.Records), n)
	}
	for _, r := range p.Records {
		class := stats.Class(r)
		if r.Index%2 == 0 && class != "" {
			t.Errorf("c=%d: valid request %d classed %q: %s", p.C, r.Index, class, r.Error)
		}
		if r.Index%2 == 1 && class != want {
			t.Errorf("c=%d: hostile request %d classed %q (%s), want %q", p.C, r.Index, class, r.Error, want)
		}
		// A loose bound: the per-request timeout plus generous room for a loaded machine.
		if d := time.Duration(r.EndNs - r.StartNs); d > requestTimeout+10*time.Second {
			t.Errorf("c=%d: request %d took %s, past its %s timeout", p.C, r.Index, d, requestTimeout)
		}
		if strings.Contains(r.Error, key) || strings.Contains(r.Error, "secret-in-location") {
			t.Errorf("c=%d: request %d error leaks a secret: %s", p.C, r.Index, r.Error)
		}
		if want == schema.ErrorRedirect && r.Index%2 == 1 && !strings.Contains(r.Error, "/v1/chat/completions") {
			t.Errorf("c=%d: redirect error %q does not record the Location", p.C, r.Error)
		}
	}
	pt := stats.Compute(p.Records, stats.Options{Concurrency: p.C})
	if pt.RequestCount != n/2 || pt.ErrorCount != n/2 || pt.ErrorsByClass[want] != n/2 {
		t.Errorf("c=%d: point counts %d valid, %d errors %v; want %d and %d %s", p.C, pt.RequestCount, pt.ErrorCount, pt.ErrorsByClass, n/2, n/2, want)
	}
	if pt.TTFT == nil || pt.TTFT.Count != n/2 {
		t.Errorf("c=%d: TTFT statistics over %v requests, want the %d valid ones", p.C, pt.TTFT, n/2)
	}
}

// runChild runs a load job in a child process and returns its points.
func runChild(t *testing.T, j job) []pointResult {
	t.Helper()
	raw, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("load child: %v\n%s", err, stderr.String())
	}
	var pts []pointResult
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pointResult
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("load child output: %v", err)
		}
		pts = append(pts, p)
	}
	if len(pts) != len(j.Cs) {
		t.Fatalf("load child reported %d points, want %d", len(pts), len(j.Cs))
	}
	return pts
}
