package runshape

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/fingerprint"
	"github.com/perfdag/perfdag/schema"
)

// TestInputsHoldTheTokenizerDigest: a point measured on a tokenizer basis re-runs when the
// file's content changes (not merely its time stamp), and an endpoint without token_basis or
// tokenizer keeps the fingerprint it always had.
func TestInputsHoldTheTokenizerDigest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tok.json")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cell := &schema.Cell{ID: "a", Workload: schema.Workload{Shape: "aa-1k"}}
	sum := func(ep schema.Endpoint) string {
		t.Helper()
		b, err := fingerprint.Canonical(inputs(&engine.Task{Cell: cell, Endpoint: &ep, Load: schema.Conc(1), BaseDir: dir}))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	plain := schema.Endpoint{URL: "http://x", Model: "m"}
	withTok := plain
	withTok.Tokenizer = "tok.json"

	write(`{"model":{"type":"BPE"}}`)
	first := sum(withTok)
	if first == sum(plain) {
		t.Fatal("the tokenizer basis left the fingerprint unchanged")
	}
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, future, future); err != nil {
		t.Fatal(err)
	}
	if sum(withTok) != first {
		t.Error("touching the file (same content) changed the fingerprint")
	}
	write(`{"model":{"type":"BPE","byte_fallback":true}}`)
	if sum(withTok) == first {
		t.Error("new file content kept the fingerprint: the point would be reused")
	}
	if b, err := fingerprint.Canonical(endpointInputs(&plain, dir)); err != nil || string(b) != `{"api_key_env":"","dcgm_url":"","metrics_url":"","model":"m","reasoning":false,"sim":null,"timeout_s":0,"url":"http://x"}` {
		t.Errorf("an endpoint without a basis: %s %v", b, err)
	}
}
