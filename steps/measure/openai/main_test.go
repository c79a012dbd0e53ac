package openai_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
	"github.com/perfdag/perfdag/steps/sim"
)

// childEnv selects a server role when the test binary re-executes itself: fidelity tests
// and benchmarks run the server in its own process, so its work never competes with the
// client's goroutines inside one Go scheduler (a real server is never in the client's
// process either) and the benchmark's CPU accounting covers the client alone.
const childEnv = "PERFDAG_OPENAI_TEST_SERVER"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		if err := serveChild(role); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	fmt.Println(ln.Addr().String())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // parent closes stdin to stop us
	return srv.Close()
}

// startChild runs a server role in a child process and returns its base URL; the child
// ends when the test does.
func startChild(t testing.TB, role string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+role)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child server did not report its address: %v", err)
	}
	return "http://" + strings.TrimSpace(line)
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
