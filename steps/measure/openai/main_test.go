package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
	"github.com/perfdag/perfdag/steps/sim"
	"github.com/perfdag/perfdag/steps/testkit"
)

// childEnv selects a server role when the test binary re-executes itself: fidelity tests
// and benchmarks run the server in its own process, so its work never competes with the
// client's goroutines inside one Go scheduler (a real server is never in the client's
// process either) and the benchmark's CPU accounting covers the client alone.
const childEnv = "PERFDAG_OPENAI_TEST_SERVER"

func TestMain(m *testing.M) { testkit.ChildMain(m, childEnv, serveChild) }

// serveChild serves until stdin closes. role is "minimal:TTFTms:ITLms:N", "sim:<SimConfig
// JSON>" or "probe".
func serveChild(role string) error {
	var h http.Handler
	kind, arg, _ := strings.Cut(role, ":")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	switch kind {
	case "minimal":
		p := strings.Split(arg, ":")
		if len(p) != 3 {
			return fmt.Errorf("minimal child: want TTFT:ITL:N, got %q", arg)
		}
		ttft, _ := strconv.Atoi(p[0])
		itl, _ := strconv.Atoi(p[1])
		n, _ := strconv.Atoi(p[2])
		h = &minimal{ttft: time.Duration(ttft) * time.Millisecond, itl: time.Duration(itl) * time.Millisecond, n: n, truths: map[string]truth{}}
	case "sim":
		var cfg schema.SimConfig
		if err := json.Unmarshal([]byte(arg), &cfg); err != nil {
			return fmt.Errorf("sim child: config: %w", err)
		}
		s, err := sim.New(cfg, "sim-model", ctx.Done())
		if err != nil {
			return err
		}
		h = s
	case "probe":
		p := &probe{}
		go p.run(ctx)
		h = p
	default:
		return fmt.Errorf("unknown child role %q", kind)
	}
	return testkit.ServeChild(&http.Server{Handler: h}, nil)
}

// startChild runs a server role in a child process and returns its base URL; the child
// ends when the test does.
func startChild(t testing.TB, role string) string {
	t.Helper()
	return testkit.StartChild(t, childEnv, role)
}

// probe measures how late this machine wakes a sleeping process: a 1 ms timer loop in a
// process of its own, so it sees other programs' load and none of the client's. GET returns
// the p99 lateness in ms since the previous GET.
type probe struct {
	mu    sync.Mutex
	lates []float64
}

func (p *probe) run(ctx context.Context) {
	t := time.NewTimer(time.Hour)
	for ctx.Err() == nil {
		due := time.Now().Add(time.Millisecond)
		t.Reset(time.Millisecond)
		<-t.C
		late := float64(time.Since(due)) / 1e6
		p.mu.Lock()
		p.lates = append(p.lates, late)
		p.mu.Unlock()
	}
}

func (p *probe) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	l := p.lates
	p.lates = nil
	p.mu.Unlock()
	slices.Sort(l)
	p99 := 0.0
	if len(l) > 0 {
		p99 = stats.Percentile(l, 99)
	}
	fmt.Fprintf(w, "%f", p99)
}
