package main

import (
	"bytes"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/sim"
)

// Secrets of the redaction test: an endpoint password (URL userinfo, through ${PW}), a lake
// password holding / # ? (raw and percent-encoded), and an API key in the environment.
const (
	endpointPW = "Endp0int-S3cret-9f2"
	lakePW     = "L4ke/S3c#ret?x"
	apiKey     = "sk-redaction-test-key-0123456789"
)

var lakePWEscaped = url.PathEscape(lakePW)

// cli runs perfdag in-process and collects its output.
type cli struct {
	t      *testing.T
	output bytes.Buffer // stdout and stderr of every command
}

func (c *cli) run(args ...string) int {
	c.t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errOut)
	c.output.Write(out.Bytes())
	c.output.Write(errOut.Bytes())
	return code
}

// leaks names every secret found in b.
func leaks(b []byte) []string {
	var found []string
	for _, s := range []string{endpointPW, lakePW, lakePWEscaped, apiKey, "S3c#ret", "S3cret-9f2"} {
		if bytes.Contains(b, []byte(s)) {
			found = append(found, s)
		}
	}
	return found
}

// TestRedaction runs campaigns against a loopback simulator whose URL carries userinfo, with
// an API key in the environment and the lake URL in every form (userinfo with / # ?, raw and
// escaped; a password query parameter; a key=value DSN; sqlite ?password=), then validates,
// runs and publishes them, and greps every file of every campaign directory, the lake, stdout
// and stderr for the passwords and the key.
func TestRedaction(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three campaigns end to end")
	}
	srv, err := sim.Start(t.Context(), schema.SimConfig{ZeroDelay: true}, "m")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hostport := strings.TrimPrefix(srv.URL(), "http://")
	t.Setenv("PERFDAG_TEST_PW", endpointPW)
	t.Setenv("PERFDAG_TEST_LAKE_PW", lakePW)
	t.Setenv("PERFDAG_TEST_LAKE_PW_ESC", lakePWEscaped)
	t.Setenv("PERFDAG_TEST_API_KEY", apiKey)
	dir := t.TempDir()
	lakeDB := filepath.Join(dir, "lake.db")
	campaign := func(lake string) string {
		ep := "http://bench:${PERFDAG_TEST_PW}@" + hostport
		return `version: 1
campaign: redaction
kind: latency
endpoints:
  main:
    url: "` + ep + `"
    model: m
    api_key_env: PERFDAG_TEST_API_KEY
    metrics_url: "` + ep + `/metrics"
    dcgm_url: "` + ep + `/dcgm/metrics"
cells:
  - {id: a, workload: {shape: custom, input_tokens: 32, output_tokens: 4}, concurrencies: [1], requests_per_point: 2}
source: {url: "https://bench:${PERFDAG_TEST_PW}@git.example/engine"}
publish: {lake: "` + lake + `", strict: false}
`
	}
	forms := []struct {
		name, lake string
		valid      bool
	}{
		{"sqlite", "sqlite://" + lakeDB, true},
		{"userinfo-escaped", "postgres://bench:${PERFDAG_TEST_LAKE_PW_ESC}@127.0.0.1:1/lake?sslmode=disable&connect_timeout=2", true},
		{"password-query", "postgres://127.0.0.1:1/lake?user=bench&password=${PERFDAG_TEST_LAKE_PW_ESC}&sslmode=disable&connect_timeout=2", true},
		{"userinfo-raw", "postgres://bench:${PERFDAG_TEST_LAKE_PW}@127.0.0.1:1/lake", false},
		{"key-value-dsn", "host=127.0.0.1 port=1 user=bench password=${PERFDAG_TEST_LAKE_PW} dbname=lake", false},
		{"sqlite-password", "sqlite://lake.db?password=${PERFDAG_TEST_LAKE_PW}", false},
	}
	c := &cli{t: t}
	var dirs []string
	for _, f := range forms {
		file := filepath.Join(dir, f.name+".yaml")
		if err := os.WriteFile(file, []byte(campaign(f.lake)), 0o644); err != nil {
			t.Fatal(err)
		}
		if code := c.run("validate", file); (code == ExitOK) != f.valid {
			t.Fatalf("validate %s: exit %d\n%s", f.name, code, c.output.String())
		}
		if !f.valid {
			if code := c.run("run", file, "--out", filepath.Join(dir, "out-"+f.name)); code != ExitInvalid {
				t.Fatalf("run %s: exit %d, want %d", f.name, code, ExitInvalid)
			}
			continue
		}
		out := filepath.Join(dir, "out-"+f.name)
		dirs = append(dirs, out)
		if code := c.run("run", file, "--out", out); code == ExitInvalid || code == ExitUsage {
			t.Fatalf("run %s: exit %d\n%s", f.name, code, c.output.String())
		}
		c.run("status", out)
		c.run("publish", out, "--no-strict") // the lake from publish.lake
	}
	for _, f := range forms {
		lake := os.Expand(f.lake, func(k string) string { return os.Getenv(k) })
		c.run("publish", dirs[0], "--no-strict", "--json", "--lake", lake)
	}
	// A literal password in the file is masked in validate's source excerpt too.
	literal := filepath.Join(dir, "literal.yaml")
	if err := os.WriteFile(literal, []byte(campaign("sqlite://lake.db?password="+lakePW)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := c.run("validate", literal); code != ExitFailed || !strings.Contains(c.output.String(), "password=**************") {
		t.Fatalf("validate with a literal password: exit %d\n%s", code, c.output.String())
	}

	if !strings.Contains(c.output.String(), "http://bench:xxxxx@"+hostport) && !strings.Contains(c.output.String(), "xxxxx") {
		t.Errorf("the output never mentions a redacted URL: is the test exercising anything?\n%s", c.output.String())
	}
	if found := leaks(c.output.Bytes()); len(found) > 0 {
		t.Errorf("stdout/stderr leak %v:\n%s", found, c.output.String())
	}
	if _, err := os.Stat(lakeDB); err != nil {
		t.Fatalf("nothing was published to the sqlite lake: %v", err)
	}
	checked := 0
	for _, root := range append(dirs, lakeDB) {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			checked++
			if found := leaks(b); len(found) > 0 {
				t.Errorf("%s leaks %v", path, found)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, must := range []string{campaigndir.Source(dirs[0]), campaigndir.Journal(dirs[0]), campaigndir.Events(dirs[0])} {
		if _, err := os.Stat(must); err != nil {
			t.Errorf("campaign directory lacks %s: %v", must, err)
		}
	}
	source, _ := os.ReadFile(campaigndir.Source(dirs[0]))
	if !strings.Contains(string(source), "- url: http://bench:xxxxx@"+hostport) {
		t.Errorf("SOURCE.md does not show the redacted endpoint:\n%s", source)
	}
	t.Logf("checked %d files and %d bytes of output", checked, c.output.Len())
}
