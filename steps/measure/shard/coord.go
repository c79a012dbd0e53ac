package shard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/sse"
)

// Pings is how many timestamp exchanges measure each child's clock offset; the one with the
// shortest round trip is kept.
const Pings = 16

// Lead is how far ahead of the moment it is agreed the start lies, for every child to have
// it before it passes (a few pipe writes; a child late anyway records by how much).
const Lead = 200 * time.Millisecond

// Command makes the process of one child: perfdag itself, `perfdag shard`.
type Command func(ctx context.Context) *exec.Cmd

// Self runs this executable's `shard` command (the perfdag binary, or a test binary acting
// as it).
func Self(ctx context.Context) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.CommandContext(ctx, exe, "shard")
}

// Outcome is what the children did: per shard, its clock offset, the exchange it came from
// and its report; StartNs is the agreed start on the coordinator's clock.
type Outcome struct {
	StartNs int64
	Shards  []ShardOutcome
}

// ShardOutcome is one child's clock and report.
type ShardOutcome struct {
	OffsetNs, RTTNs int64
	Done            Done
}

// child is one running shard process.
type child struct {
	k      int
	who    func() string // pid 123, or 10.0.0.5:7070
	w      *lineWriter
	stdin  io.Closer
	lines  chan up
	exited chan error
	stderr *tail
}

// Start runs the children of specs, waits until each is ready, measures their clocks,
// agrees a start Lead ahead and waits for every child's records. The first child that fails
// (a non-zero exit, a signal, a pipe closed without its report) stops the others and fails
// the whole: no point is computed short of its load.
func Start(ctx context.Context, command Command, specs []Spec, progress func(Progress)) (Outcome, error) {
	return start(ctx, func(ctx context.Context, k int, spec Spec) (*child, error) { return launch(ctx, command, k, spec) }, specs, progress)
}

// StartRemote is Start with clients already listening (`perfdag shard --listen`, Argo pods):
// one connection per client of r, in order, each authenticated with r's token. A client
// whose connection drops fails the point as a child's exit does.
func StartRemote(ctx context.Context, r Remote, specs []Spec, progress func(Progress)) (Outcome, error) {
	if len(r.Addrs) != len(specs) {
		return Outcome{}, fmt.Errorf("%d clients listen (%s), the point is split over %d", len(r.Addrs), strings.Join(r.Addrs, ","), len(specs))
	}
	if r.Token == "" {
		return Outcome{}, fmt.Errorf("%s is empty: the listening clients refuse a coordinator without their token", TokenEnv)
	}
	return start(ctx, func(ctx context.Context, k int, spec Spec) (*child, error) { return connect(ctx, r, k, spec) }, specs, progress)
}

func start(ctx context.Context, launch func(context.Context, int, Spec) (*child, error), specs []Spec, progress func(Progress)) (Outcome, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kids := make([]*child, len(specs))
	defer func() {
		cancel()
		for _, c := range kids {
			if c != nil {
				<-c.exited
				c.exited <- nil
			}
		}
	}()
	for k, spec := range specs {
		c, err := launch(ctx, k, spec)
		if err != nil {
			return Outcome{}, err
		}
		kids[k] = c
	}
	for _, c := range kids {
		if _, err := c.expect(ctx, func(m up) bool { return m.Ready }); err != nil {
			return Outcome{}, err
		}
	}
	out := Outcome{Shards: make([]ShardOutcome, len(kids))}
	for k, c := range kids {
		off, rtt, err := c.clock(ctx)
		if err != nil {
			return Outcome{}, err
		}
		out.Shards[k].OffsetNs, out.Shards[k].RTTNs = off, rtt
	}
	out.StartNs = sse.Now() + int64(Lead)
	for k, c := range kids {
		start := out.StartNs + out.Shards[k].OffsetNs + int64(specs[k].delay())
		if err := c.w.send(down{StartNs: &start}); err != nil {
			return Outcome{}, c.failure(ctx, err)
		}
	}
	type report struct {
		k    int
		done Done
		err  error
	}
	reports := make(chan report, len(kids))
	live := newTally(len(kids), progress)
	for k, c := range kids {
		go func() {
			m, err := c.expect(ctx, func(m up) bool {
				if m.Progress != nil {
					live.set(k, *m.Progress)
					return false
				}
				return m.Done != nil
			})
			if err == nil {
				err = c.wait(ctx)
			}
			r := report{k: k, err: err}
			if m.Done != nil {
				r.done = *m.Done
			}
			reports <- r
		}()
	}
	var first error
	for range kids {
		r := <-reports
		if r.err != nil && first == nil {
			first = r.err
			cancel() // the others stop: the point fails whole
		}
		out.Shards[r.k].Done = r.done
	}
	if first != nil {
		return Outcome{}, first
	}
	return out, nil
}

// PointFailed ends the error of a point that failed with one of its clients: FailedWithClient
// finds it in a node's recorded reason.
const PointFailed = "the point is failed, not computed short of its load"

// FailedWithClient says whether a failed node's reason is a client's failure: on Argo the run
// task then fails, so that its DAG is retried with new client pods.
func FailedWithClient(reason string) bool { return strings.Contains(reason, PointFailed) }

// delay is the part's start after the agreed one.
func (s Spec) delay() time.Duration {
	if s.Part.Rate > 0 && s.Part.Arrival == loadgen.ArrivalConstant {
		return time.Duration(float64(s.Part.Index) / (s.Part.Rate * float64(s.Of)) * float64(time.Second))
	}
	return 0
}

func launch(ctx context.Context, command Command, k int, spec Spec) (*child, error) {
	cmd := command(ctx)
	cmd.SysProcAttr = childAttr()
	cmd.WaitDelay = 5 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("client %d: %w", k, err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("client %d: %w", k, err)
	}
	c := &child{k: k, who: func() string { return fmt.Sprintf("pid %d", cmd.Process.Pid) }, w: newLineWriter(in), stdin: in, lines: make(chan up, 4), exited: make(chan error, 1), stderr: &tail{max: 4096}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start client %d of %d: %w", k, spec.Of, err)
	}
	go func() {
		sc := bufio.NewScanner(outPipe)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			var m up
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.lines <- m
			}
		}
		close(c.lines)
		c.exited <- cmd.Wait()
	}()
	if err := c.w.send(spec); err != nil {
		return c, c.failure(ctx, err)
	}
	return c, nil
}

// connect dials the k-th listening client of r and hands it its spec. The connection is
// closed when ctx ends (the point stopped), which stops the client's part.
func connect(ctx context.Context, r Remote, k int, spec Spec) (*child, error) {
	addr := r.Addrs[k]
	conn, rd, err := dial(ctx, addr, r.Token)
	if err != nil {
		return nil, fmt.Errorf("client %d of %d at %s: %w; %s (resume measures it again)", k, spec.Of, addr, err, PointFailed)
	}
	tcp, _ := conn.(*net.TCPConn)
	c := &child{k: k, who: func() string { return addr }, w: newLineWriter(conn), stdin: closeWriter{tcp, conn}, lines: make(chan up, 4),
		exited: make(chan error, 1), stderr: &tail{max: 4096}}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	go func() {
		var last up
		sc := bufio.NewScanner(rd)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			var m up
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				last = m
				c.lines <- m
			}
		}
		close(c.lines)
		stop()
		conn.Close()
		if last.Done == nil {
			c.exited <- errors.New("its connection closed before its report")
			return
		}
		c.exited <- nil
	}()
	if err := c.w.send(spec); err != nil {
		return c, c.failure(ctx, err)
	}
	return c, nil
}

// closeWriter ends the coordinator's side of a client's connection (the client's end of
// input), keeping its reports readable.
type closeWriter struct {
	tcp  *net.TCPConn
	conn net.Conn
}

func (w closeWriter) Close() error {
	if w.tcp != nil {
		return w.tcp.CloseWrite()
	}
	return w.conn.Close()
}

// expect waits for the child's next message and checks it is the one wanted.
func (c *child) expect(ctx context.Context, want func(up) bool) (up, error) {
	for {
		select {
		case m, ok := <-c.lines:
			switch {
			case !ok:
				return up{}, c.failure(ctx, errors.New("it closed its pipe"))
			case m.Error != "":
				return m, c.failure(ctx, errors.New(m.Error))
			case want(m):
				return m, nil
			case m.Progress != nil:
				continue // a live count the caller did not ask for
			}
			return m, c.failure(ctx, fmt.Errorf("unexpected message %+v", m))
		case <-ctx.Done():
			return up{}, ctx.Err()
		}
	}
}

// clock measures the child's offset (its clock − this one's) from Pings exchanges, keeping
// the one with the shortest round trip: the offset is within ± half of it.
func (c *child) clock(ctx context.Context) (offset, rtt int64, err error) {
	rtt = -1
	for i := range Pings {
		sent := sse.Now()
		if err := c.w.send(down{Ping: &i}); err != nil {
			return 0, 0, c.failure(ctx, err)
		}
		m, err := c.expect(ctx, func(m up) bool { return m.Pong != nil && *m.Pong == i })
		if err != nil {
			return 0, 0, err
		}
		got := sse.Now()
		if r := got - sent; rtt < 0 || r < rtt {
			rtt, offset = r, m.NowNs-(sent+got)/2
		}
	}
	return offset, rtt, nil
}

// wait waits for the child to exit and names how it ended when that was not a success.
func (c *child) wait(ctx context.Context) error {
	_ = c.stdin.Close()
	select {
	case err := <-c.exited:
		c.exited <- err
		if err != nil {
			return c.failure(ctx, err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// failure words a child's failure: the interrupt when the run is cancelled, else which client
// failed, how (its exit status when it has exited) and the end of its stderr.
func (c *child) failure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	select {
	case exit := <-c.exited:
		c.exited <- exit
		if exit != nil {
			err = exit
		}
	case <-time.After(2 * time.Second):
	}
	msg := fmt.Sprintf("client %d (%s) failed: %v", c.k, c.who(), err)
	if s := strings.TrimSpace(c.stderr.String()); s != "" {
		msg += ": " + s
	}
	return errors.New(msg + "; " + PointFailed + " (resume measures it again)")
}

// tail keeps the last max bytes written (a child's stderr).
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// tally sums the children's live counts for one progress line.
type tally struct {
	mu  sync.Mutex
	by  []Progress
	out func(Progress)
}

func newTally(n int, out func(Progress)) *tally { return &tally{by: make([]Progress, n), out: out} }

func (t *tally) set(k int, p Progress) {
	if t.out == nil {
		return
	}
	t.mu.Lock()
	t.by[k] = p
	var sum Progress
	for _, q := range t.by {
		sum.Done += q.Done
		sum.Errors += q.Errors
	}
	t.mu.Unlock()
	t.out(sum)
}
