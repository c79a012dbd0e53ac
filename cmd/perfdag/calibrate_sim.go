package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/perfdag/perfdag/steps/sim"
)

// simChild is the zero-delay simulator calibrate measures against, in a child process (its
// own Go runtime: the simulator's garbage collection and goroutines never run on the client's
// scheduler, as a real server's never do). It serves on a socket this process opened and
// handed down, so there is no port to race for and no output to parse.
type simChild struct {
	url  string
	cmd  *exec.Cmd
	done chan error
}

// startSim starts `perfdag sim --listen-fd 3` with args (--zero-delay, --config FILE) and waits
// until it answers.
func startSim(ctx context.Context, model string, args ...string) (*simChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find perfdag's own executable for the simulator: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the simulator: %w", err)
	}
	defer ln.Close() // the child holds its own copy
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		return nil, fmt.Errorf("hand the simulator its socket: %w", err)
	}
	defer f.Close()
	var stderr strings.Builder
	cmd := exec.Command(exe, append([]string{"sim", "--listen-fd", "3", "--model", model}, args...)...)
	cmd.ExtraFiles = []*os.File{f}
	cmd.Stderr = &stderr
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the simulator: %w", err)
	}
	c := &simChild{url: "http://" + ln.Addr().String(), cmd: cmd, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := c.get(ctx, "/health", nil); err == nil {
			return c, nil
		}
		select {
		case err := <-c.done:
			c.done <- err
			return nil, fmt.Errorf("the simulator exited: %v: %s", err, strings.TrimSpace(stderr.String()))
		case <-ctx.Done():
			c.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("the simulator did not answer within 30 s: %s", strings.TrimSpace(stderr.String()))
		}
	}
}

// served is the simulator's record of every request it served (GET /sim/served).
func (c *simChild) served(ctx context.Context) ([]sim.Served, error) {
	var out []sim.Served
	return out, c.get(ctx, "/sim/served", &out)
}

func (c *simChild) get(ctx context.Context, path string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	if into == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}

// stop ends the child (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (c *simChild) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// cpuTime is this process's CPU time so far (user + system): the client's cost.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAvg reads the 1, 5 and 15 minute load averages (Linux); ok is false elsewhere.
func loadAvg() (l [3]float64, ok bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l, false
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return l, false
	}
	for i := range 3 {
		if _, err := fmt.Sscan(f[i], &l[i]); err != nil {
			return l, false
		}
	}
	return l, true
}
