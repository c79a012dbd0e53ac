package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCPUProfileEnv: PERFDAG_CPUPROFILE writes a (gzip-framed pprof) CPU profile of the command
// and leaves its output alone; an unwritable path is reported and the command still runs.
func TestCPUProfileEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	t.Setenv(cpuProfileEnv, path)
	var out, errb bytes.Buffer
	if code := Main([]string{"version"}, nil, &out, &errb); code != 0 {
		t.Fatalf("perfdag version: exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "perfdag ") || errb.Len() != 0 {
		t.Errorf("output changed by profiling: stdout %q stderr %q", out.String(), errb.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("profile is not a gzip-framed pprof file: % x", b[:min(len(b), 8)])
	}

	t.Setenv(cpuProfileEnv, filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.pprof"))
	out.Reset()
	errb.Reset()
	if code := Main([]string{"version"}, nil, &out, &errb); code != 0 {
		t.Fatalf("perfdag version with an unwritable profile path: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), cpuProfileEnv) || !strings.HasPrefix(out.String(), "perfdag ") {
		t.Errorf("unwritable profile path: stdout %q stderr %q", out.String(), errb.String())
	}
}
