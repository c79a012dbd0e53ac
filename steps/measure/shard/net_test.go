package shard

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/sim"
)

// syncBuf is a log written by a listener's goroutine and read by the test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// listener is one `perfdag shard --listen` in-process: its address, log and stop.
type listener struct {
	addr string
	log  *syncBuf
	stop context.CancelFunc
	done chan error
}

func listen(t *testing.T, token string) *listener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{log: &syncBuf{}, stop: cancel, done: make(chan error, 1)}
	at := make(chan net.Addr, 1)
	go func() { l.done <- Listen(ctx, "127.0.0.1:0", token, l.log, func(a net.Addr) { at <- a }) }()
	select {
	case a := <-at:
		l.addr = a.String()
	case err := <-l.done:
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		<-l.done
	})
	return l
}

// remoteSpecs splits a c4 point of 24 requests over n clients against srv.
func remoteSpecs(t *testing.T, srv *sim.Server, n int) []Spec {
	dir := t.TempDir()
	l := schema.Conc(4)
	specs := make([]Spec, n)
	for k := range n {
		specs[k] = Spec{Dir: dir, BaseDir: dir, Cell: "split", Load: l, EndpointKey: "e", Endpoint: schema.Endpoint{URL: srv.URL(), Model: "m"},
			BaseURL: srv.URL(), Workload: schema.Workload{Shape: "custom", InputTokens: 50, OutputTokens: 40}, Salt: "s", Phase: "profiling", Of: n,
			Part:    PartSpec{Index: k, From: k * 24 / n, Requests: 24 / n, Concurrency: 4 / n},
			Records: campaigndir.ShardRecords("split", l, k)}
	}
	return specs
}

func startSim(t *testing.T, cfg schema.SimConfig) *sim.Server {
	t.Helper()
	srv, err := sim.Start(context.Background(), cfg, "m")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// TestRemoteClients: two listening clients measure a point over TCP as two child processes
// would — each writes its records and had its clock measured — and serve the next point on a
// new connection; the token never appears in what they log.
func TestRemoteClients(t *testing.T) {
	srv := startSim(t, schema.SimConfig{TTFTMs: 2, TPOTMs: 0.5})
	const token = "s3cret-token"
	a, b := listen(t, token), listen(t, token)
	for point := range 2 {
		specs := remoteSpecs(t, srv, 2)
		out, err := StartRemote(context.Background(), Remote{Addrs: []string{a.addr, b.addr}, Token: token}, specs, nil)
		if err != nil {
			t.Fatalf("point %d: %v", point, err)
		}
		for k, so := range out.Shards {
			n := countLines(t, campaigndir.Abs(specs[k].Dir, specs[k].Records))
			if so.Done.Records != 12 || n != 12 || so.RTTNs <= 0 {
				t.Errorf("point %d client %d: reported %d records, wrote %d, clock round trip %d ns; want 12, 12 and a measured clock",
					point, k, so.Done.Records, n, so.RTTNs)
			}
		}
	}
	for _, l := range []*listener{a, b} {
		if strings.Contains(l.log.String(), token) {
			t.Errorf("a listener logged the token: %s", l.log.String())
		}
	}
}

// TestRemoteClientRefusesStranger: a readiness probe (connected, closed) is not logged; a peer without the token gets a challenge and a closed
// connection, never a served spec (no records written); a coordinator with a wrong token
// fails the point naming the client; the listener still serves its real coordinator after.
func TestRemoteClientRefusesStranger(t *testing.T) {
	srv := startSim(t, schema.SimConfig{TTFTMs: 2, TPOTMs: 0.5})
	l := listen(t, "right")
	specs := remoteSpecs(t, srv, 1)
	probe, err := net.Dial("tcp", l.addr) // a readiness probe: connects, says nothing, leaves
	if err != nil {
		t.Fatal(err)
	}
	probe.Close()
	conn, err := net.Dial("tcp", l.addr)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	if line, err := r.ReadBytes('\n'); err != nil || !strings.Contains(string(line), `"nonce"`) {
		t.Fatalf("no challenge: %q %v", line, err)
	}
	spec, _ := json.Marshal(specs[0])
	_, _ = conn.Write([]byte(`{"mac":"00"}` + "\n" + string(spec) + "\n"))
	if rest, _ := r.ReadString('\n'); rest != "" {
		t.Errorf("a stranger got an answer: %q", rest)
	}
	conn.Close()
	_, err = StartRemote(context.Background(), Remote{Addrs: []string{l.addr}, Token: "wrong"}, specs, nil)
	if err == nil || !strings.Contains(err.Error(), "client 0 ("+l.addr+") failed") {
		t.Errorf("a coordinator with the wrong token: %v, want client 0 (%s) failed", err, l.addr)
	}
	if _, err := os.Stat(filepath.Join(specs[0].Dir, filepath.FromSlash(specs[0].Records))); err == nil {
		t.Error("records written for a peer without the token")
	}
	if got := strings.Count(l.log.String(), "refused: the peer does not hold the token (PERFDAG_SHARD_TOKEN)"); got != 2 || strings.Count(l.log.String(), "\n") != 2 {
		t.Errorf("listener log: %q, want two refusals and no line for the probe", l.log.String())
	}
	if _, err := StartRemote(context.Background(), Remote{Addrs: []string{l.addr}, Token: "right"}, specs, nil); err != nil {
		t.Errorf("the coordinator holding the token after two strangers: %v", err)
	}
}

// TestRemoteClientDies: a listening client that goes away mid-point (its pod killed) fails
// the point, naming the client's address.
func TestRemoteClientDies(t *testing.T) {
	srv := startSim(t, schema.SimConfig{TTFTMs: 5, TPOTMs: 5})
	a, b := listen(t, "tk"), listen(t, "tk")
	specs := remoteSpecs(t, srv, 2)
	var once sync.Once
	_, err := StartRemote(context.Background(), Remote{Addrs: []string{a.addr, b.addr}, Token: "tk"}, specs, func(Progress) {
		once.Do(b.stop) // at the first live count, b's pod dies while the point runs
	})
	if err == nil || !strings.Contains(err.Error(), "client 1 ("+b.addr+") failed") ||
		!strings.Contains(err.Error(), "the point is failed, not computed short of its load") {
		t.Fatalf("a client gone mid-point: %v, want client 1 (%s) failed", err, b.addr)
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}
