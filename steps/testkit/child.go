package testkit

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// ChildMain is the TestMain of a package whose tests run a server in a child process (the
// test binary re-executed by StartChild, so the server never shares the client's process or
// Go scheduler): in such a child (env set) it runs child with env's value, the role, and
// exits 1 on its error, 0 otherwise; in the parent it runs the tests.
func ChildMain(m *testing.M, env string, child func(role string) error) {
	if role := os.Getenv(env); role != "" {
		if err := child(role); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// ServeChild is a child's server: it serves srv on a loopback port, through wrap (when not
// nil) around the port's listener, prints the port's address for StartChild, and closes srv
// when the parent closes stdin.
func ServeChild(srv *http.Server, wrap func(net.Listener) net.Listener) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	served := ln
	if wrap != nil {
		served = wrap(ln)
	}
	go func() { _ = srv.Serve(served) }()
	fmt.Println(ln.Addr().String())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // the parent closes stdin to stop us
	return srv.Close()
}

// StartChild re-executes the test binary as a server child (ChildMain, ServeChild) in role,
// passed in env, and returns its base URL; the child ends when the test does.
func StartChild(t testing.TB, env, role string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+role)
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
		_ = stdin.Close()
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
		t.Fatalf("child server (%s=%s) did not report its address: %v", env, role, err)
	}
	return "http://" + strings.TrimSpace(line)
}
