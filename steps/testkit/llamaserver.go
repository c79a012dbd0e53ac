package testkit

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PeersEnv names a directory holding llama.cpp/bin/llama-server and models/ (default: the
// shared/peers directory beside the repository checkout, ../shared/peers from its root).
const PeersEnv = "PERFDAG_PEERS"

// LlamaModel is the tiny random-weight model the peers directory ships.
const LlamaModel = "tiny-llama-2L-256.gguf"

// LlamaAlias is the model name the started server answers to.
const LlamaAlias = "tiny-llama"

// PeersDir returns the peers directory so a checkout anywhere finds the server kept beside it:
// $PERFDAG_PEERS, else the first shared/peers beside the module root or one of its ancestors;
// "" when none holds the server.
func PeersDir() string {
	if d := os.Getenv(PeersEnv); d != "" {
		return d
	}
	var cands []string
	if dir, err := os.Getwd(); err == nil {
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
		for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
			cands = append(cands, filepath.Join(d, "shared", "peers"))
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	for _, c := range cands {
		if _, err := os.Stat(filepath.Join(c, "llama.cpp", "bin", "llama-server")); err == nil {
			return c
		}
	}
	return ""
}

// LlamaServer starts the real llama.cpp llama-server of the peers directory on a free loopback
// port with `--metrics -np 4 -c 16384 -t 1 --alias tiny-llama` plus extra arguments, waits until
// GET /health answers 200 and returns its base URL (http://127.0.0.1:PORT). The server is killed
// when the test ends. With no peers directory found the test skips, saying where it looked;
// with $PERFDAG_PEERS or a found directory lacking the binary or model it skips (fails under
// PERFDAG_NO_SKIP=1).
func LlamaServer(t testing.TB, extra ...string) string {
	t.Helper()
	peers := PeersDir()
	if peers == "" {
		// The peer server is not a package any machine can install: a checkout without it
		// beside (or $PERFDAG_PEERS) skips even in CI, saying so; a named directory that lacks
		// it fails under PERFDAG_NO_SKIP=1 like any missing tool.
		t.Skipf("the llama.cpp peer server is not beside this checkout (no shared/peers beside it or its ancestors); set %s to a directory holding llama.cpp/bin/llama-server and models/%s", PeersEnv, LlamaModel)
		return ""
	}
	bin := filepath.Join(peers, "llama.cpp", "bin", "llama-server")
	model := filepath.Join(peers, "models", LlamaModel)
	for _, f := range []string{bin, model} {
		if _, err := os.Stat(f); err != nil {
			Unavailable(t, fmt.Sprintf("the llama.cpp peer server is missing (%v); set %s to a directory holding llama.cpp/bin/llama-server and models/%s", err, PeersEnv, LlamaModel))
			return ""
		}
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		base, err := startLlama(t, bin, model, extra)
		if err == nil {
			return base
		}
		lastErr = err
	}
	t.Fatalf("llama-server did not start: %v", lastErr)
	return ""
}

// startLlama starts one server on a port that was free a moment ago; an error (and a killed
// process) when it exits or stays unhealthy, e.g. because the port was taken meanwhile.
func startLlama(t testing.TB, bin, model string, extra []string) (string, error) {
	port, err := freePort()
	if err != nil {
		return "", err
	}
	args := append([]string{"-m", model, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--metrics", "-np", "4", "-c", "16384", "-t", "1", "--alias", LlamaAlias}, extra...)
	cmd := exec.Command(bin, args...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := waitHealthy(base, exited); err != nil {
		stop()
		if waitErr != nil {
			err = fmt.Errorf("%w (exit: %v)", err, waitErr)
		}
		return "", fmt.Errorf("%s %s: %w\n%s", bin, strings.Join(args, " "), err, tail(log.String(), 2000))
	}
	t.Cleanup(stop)
	return base, nil
}

// waitHealthy polls GET /health until it answers 200 (the model is loaded), the process exits
// or a minute passes.
func waitHealthy(base string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before it was healthy")
		case <-ctx.Done():
			return fmt.Errorf("GET /health did not answer 200 within a minute")
		case <-tick.C:
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
