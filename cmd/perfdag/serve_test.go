package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve refuses (exit 2) a non-loopback address without a token, and bad token flags, before
// it listens anywhere.
func TestServeRefusesAnOpenAddress(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty-token")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", dir, "--addr", "0.0.0.0:0"}, "not a loopback address: give --token or --token-file"},
		{[]string{"serve", dir, "--addr", ":0"}, "not a loopback address"},
		{[]string{"serve", dir, "--addr", "[::]:0"}, "not a loopback address"},
		{[]string{"serve", dir, "--addr", "0.0.0.0:0", "--token-file", empty}, "is empty"},
		{[]string{"serve", dir, "--addr", "0.0.0.0:0", "--token-file", filepath.Join(dir, "missing")}, "read --token-file"},
		{[]string{"serve", dir, "--token", "a", "--token-file", empty}, "not both"},
		{[]string{"serve", filepath.Join(dir, "nope")}, "is not a directory"},
	} {
		var out, errb bytes.Buffer
		a := testApp()
		a.stdout, a.stderr = &out, &errb
		if code := a.main(tc.args); code != ExitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q", tc.args, code, errb.String(), ExitUsage, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("%v printed %q: it must not have started serving", tc.args, out.String())
		}
	}
}

// The token is never printed, even when serve says how to pass it.
func TestServeNeverPrintsTheToken(t *testing.T) {
	const token = "tok-9f8e7d6c5b4a"
	cmd := perfdagChild("serve", t.TempDir(), "--addr", "127.0.0.1:0", "--token", token)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	br := bufio.NewReader(out)
	var lines string
	for range 2 {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("serve printed %q then: %v", lines, err)
		}
		lines += l
	}
	if strings.Contains(lines, token) || !strings.Contains(lines, "http://127.0.0.1:") || !strings.Contains(lines, "Authorization header") {
		t.Errorf("serve printed:\n%s", lines)
	}
}

// A token too weak to guard the campaigns (blank, or under 16 characters once trimmed as
// --token-file is) and an --addr without a port are refused, exit 2, naming what to give. Each
// case runs as a child: one that started serving instead is killed and reported.
func TestServeRefusesWeakTokensAndAddrsWithoutPort(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short-token")
	if err := os.WriteFile(short, []byte("  abc123  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:0", "--token", " "}, "--token is empty"},
		{[]string{"--addr", "127.0.0.1:0", "--token", "  "}, "--token is empty"},
		{[]string{"--addr", "0.0.0.0:0", "--token", "a"}, "--token is 1 character: give at least 16"},
		{[]string{"--addr", "127.0.0.1:0", "--token", " 0123456789abcde "}, "--token is 15 characters: give at least 16"},
		{[]string{"--addr", "0.0.0.0:0", "--token-file", short}, "is 6 characters: give at least 16"},
		{[]string{"--addr", "127.0.0.1"}, "--addr 127.0.0.1: missing port in address; give HOST:PORT, e.g. --addr 127.0.0.1:8080"},
		{[]string{"--addr", "localhost"}, "--addr localhost: missing port in address; give HOST:PORT, e.g. --addr localhost:8080"},
		{[]string{"--addr", "[::1]"}, "--addr [::1]: missing port in address; give HOST:PORT, e.g. --addr [::1]:8080"},
		{[]string{"--addr", "127.0.0.1:0:1"}, "--addr 127.0.0.1:0:1: too many colons in address"},
		{[]string{"--addr", "::1"}, "--addr ::1: too many colons in address; give HOST:PORT, e.g. --addr [::1]:8080"},
	} {
		cmd := perfdagChild(append([]string{"serve", dir}, tc.args...)...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		first, _ := bufio.NewReader(out).ReadString('\n') // "serving …" when it started; EOF when it exited
		if first != "" {
			_ = cmd.Process.Kill()
		}
		err = cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if first != "" || code != ExitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("serve %v: printed %q, exit %d (%v), stderr %q; want exit %d saying %q", tc.args, first, code, err, errb.String(), ExitUsage, tc.want)
		}
	}
}
