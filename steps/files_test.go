package steps

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/load"
)

// TestTokenizerFileChecked: validation opens and builds an endpoint's tokenizer file, relative
// to the campaign file, and places a missing, unreadable or non-tokenizer file at the
// tokenizer key's line and column.
func TestTokenizerFileChecked(t *testing.T) {
	reg, err := Registry()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fixture, err := os.ReadFile(filepath.Join("measure", "hftok", "testdata", "tiny-llama-2L-256.tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"tok.json": fixture, "config.json": []byte(`{"architectures": ["LlamaForCausalLM"]}`)} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := func(tokenizer string) []byte {
		return []byte("version: 1\ncampaign: c\nendpoints:\n  main:\n    url: http://127.0.0.1:1\n    model: m\n    tokenizer: " + tokenizer +
			"\ncells:\n  - {id: a, workload: {shape: aa-1k}, concurrencies: [1]}\n")
	}
	if _, err := load.Bytes("c.yaml", dir, src("tok.json"), reg, load.Options{}); err != nil {
		t.Fatalf("a tokenizer.json beside the campaign: %v", err)
	}
	for _, c := range []struct{ path, want string }{
		{"absent.json", "no such file"},
		{"config.json", "not a tokenizer.json the tokenizer library can load"},
		{".", "not a regular file"},
	} {
		_, err := load.Bytes("c.yaml", dir, src(c.path), reg, load.Options{})
		var l diag.List
		if !errors.As(err, &l) || len(l) != 1 {
			t.Fatalf("%s: %v, want one positioned problem", c.path, err)
		}
		if d := l[0]; d.Line != 7 || d.Col != 16 || !strings.Contains(d.Message, "endpoints.main.tokenizer") || !strings.Contains(d.Message, c.want) {
			t.Errorf("%s: %d:%d %q, want 7:16 naming endpoints.main.tokenizer and %q", c.path, d.Line, d.Col, d.Message, c.want)
		}
	}
}
