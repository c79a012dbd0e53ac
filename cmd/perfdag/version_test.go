package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	yes := true
	b := buildInfo{Version: "dev-0123456789ab-dirty", Module: "github.com/perfdag/perfdag", Go: "go1.26.8", Platform: "linux/amd64",
		Revision: "0123456789abcdef", Time: "2026-12-03T08:00:00Z", Modified: &yes}
	want := `perfdag dev-0123456789ab-dirty
  module    github.com/perfdag/perfdag
  go        go1.26.8 linux/amd64
  revision  0123456789abcdef (modified)
  time      2026-12-03T08:00:00Z
`
	if got := b.text(); got != want {
		t.Errorf("text:\n%s\nwant\n%s", got, want)
	}
	if got := (buildInfo{Version: "v1.2.0", Go: "go1.26.8", Platform: "linux/arm64"}).text(); got != "perfdag v1.2.0\n  go        go1.26.8 linux/arm64\n" {
		t.Errorf("without VCS facts: %q", got)
	}
}

// TestVersionCommand: `version`, `--version` and `version --json` name the same version and
// the Go toolchain this binary was built with; an -ldflags version is kept as given.
func TestVersionCommand(t *testing.T) {
	run := func(args ...string) string {
		var out, errb bytes.Buffer
		if code := Main(args, nil, &out, &errb); code != 0 {
			t.Fatalf("perfdag %v: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	text, flag := run("version"), run("--version")
	if text != flag {
		t.Errorf("version and --version differ:\n%s\n%s", text, flag)
	}
	if !strings.HasPrefix(text, "perfdag ") || !strings.Contains(text, "go        "+runtime.Version()) {
		t.Errorf("version text:\n%s", text)
	}
	var b buildInfo
	if err := json.Unmarshal([]byte(run("version", "--json")), &b); err != nil {
		t.Fatal(err)
	}
	if b.Go != runtime.Version() || !strings.HasPrefix(text, "perfdag "+b.Version+"\n") || b.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version --json %+v does not match the text:\n%s", b, text)
	}
	if got := readBuildInfo("v9.9.9").Version; got != "v9.9.9" {
		t.Errorf("an -ldflags version is replaced: %q", got)
	}
}
