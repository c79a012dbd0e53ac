package hftok

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is the tokenizer.json of the peers model (../shared/peers/models/tiny-llama-2L-256.gguf),
// made by testdata/gguf2tokenizer (see testdata/README.md).
const fixture = "testdata/tiny-llama-2L-256.tokenizer.json"

// TestCountMatchesServer: the counts are what llama-server's own POST /tokenize
// (add_special false) answered for these texts with that model — byte fallback included
// (characters outside the vocabulary are one token per UTF-8 byte).
func TestCountMatchesServer(t *testing.T) {
	tk, err := Load(fixture)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 4},
		{"Hello, world", 6},
		{"The quick brown fox jumps over the lazy dog.", 17},
		{"  two  spaces", 8},
		{"naïve café — 80–130 ms", 20},
		{"日本語 🎉", 15},
		{"rzt kdcrzt kdc bgg bggeiynxvngqrzteiynxv", 14},
	}
	for _, c := range cases {
		got, err := tk.Count(c.text)
		if err != nil || got != c.want {
			t.Errorf("Count(%q) = %d, %v; the server counts %d", c.text, got, err, c.want)
		}
	}
}

// TestLoadOnceOffline: the same bytes build once per process, under another name too, and
// loading touches neither the home directory (the library's cache) nor the network.
func TestLoadOnceOffline(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GO_TOKENIZER", "")
	a, err := Load(fixture)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "renamed.json")
	if err := os.WriteFile(other, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(other)
	if err != nil {
		t.Fatal(err)
	}
	if a != c {
		t.Error("the same file under another name was built twice")
	}
	d, err := Digest(other)
	if err != nil || d != a.Digest || len(d) != 64 {
		t.Errorf("Digest = %q, %v; want the loaded tokenizer's %q", d, err, a.Digest)
	}
	// A file not built yet (the same JSON, one more byte): building and counting log nothing.
	var logged bytes.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	fresh := filepath.Join(t.TempDir(), "fresh.json")
	if err := os.WriteFile(fresh, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(fresh)
	if err != nil || f == a {
		t.Fatalf("fresh file: %v (built anew: %v)", err, f != a)
	}
	if _, err := f.Count("hello world, naïve café"); err != nil {
		t.Fatal(err)
	}
	if logged.Len() > 0 {
		t.Errorf("the library logged: %s", logged.String())
	}
	if ents, _ := os.ReadDir(home); len(ents) != 0 {
		t.Errorf("loading wrote into $HOME: %v", ents)
	}
}

func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "absent.json"), "no such file"},
		{"directory", dir, "not a regular file"},
		{"not json", write("yaml.json", "model: x\n"), "not JSON"},
		{"no model", write("nomodel.json", `{"version":"1.0"}`), "no model object"},
		{"unknown model", write("odd.json", `{"model":{"type":"Magic"}}`), `model.type "Magic"`},
		{"malformed vocab", write("vocab.json", `{"model":{"type":"BPE","vocab":5,"merges":[]}}`), "malformed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(c.path)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load(%s) = %v, want an error saying %q", c.path, err, c.want)
			}
		})
	}
}

// TestPiecesCountAsWhole: on a tokenizer of SentencePiece's shape a long text counts the same
// cut into pieces at word starts as whole (spaces doubled, leading and trailing, newlines and
// characters outside the vocabulary included); a vocabulary with a token holding "▁" after
// another character, or another normalizer, is never cut.
func TestPiecesCountAsWhole(t *testing.T) {
	tk, err := Load(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if !tk.split {
		t.Fatal("the fixture has SentencePiece's shape but is counted whole")
	}
	words := strings.Fields("the researchers measured 80–130 ms on naïve café roofs; Some soldiers kdcrzt bggeiynxv, and many more")
	var b strings.Builder
	for i := range 400 {
		b.WriteString(words[i%len(words)])
		switch {
		case i%17 == 0:
			b.WriteString("  ")
		case i%29 == 0:
			b.WriteString("\n\n")
		default:
			b.WriteString(" ")
		}
	}
	long := b.String()
	for _, text := range []string{long, "  " + long, long + " ", long + "  x", strings.TrimSpace(long)} {
		cut, err := tk.Count(text)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(pieces(text)); n < 5 {
			t.Fatalf("%d pieces of %d bytes: the test does not cut", n, len(text))
		}
		tk.split = false
		whole, err := tk.Count(text)
		tk.split = true
		if err != nil || cut != whole {
			t.Errorf("%d bytes: %d tokens in pieces, %d whole (%v)", len(text), cut, whole, err)
		}
	}

	norm := `"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]}`
	model := `"model":{"type":"BPE","unk_token":"<unk>","vocab":{"<unk>":0,"▁":1,"a":2,"b":3,"▁a":4,%s},"merges":["▁ a"]}`
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		split      bool
	}{
		{"spm shape", "{" + norm + "," + fmt.Sprintf(model, `"▁▁":5`) + "}", true},
		{"inner word mark", "{" + norm + "," + fmt.Sprintf(model, `"a▁b":5`) + "}", false},
		{"no normalizer", "{" + fmt.Sprintf(model, `"▁▁":5`) + "}", false},
		{"pre-tokenizer", `{"pre_tokenizer":{"type":"Whitespace"},` + norm + "," + fmt.Sprintf(model, `"▁▁":5`) + "}", false},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
		if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		tk, err := Load(path)
		if err != nil || tk.split != c.split {
			t.Errorf("%s: split %v (%v), want %v", c.name, tk != nil && tk.split, err, c.split)
		}
	}
}

// TestByteLevelBPE: a GPT-2-style file (ByteLevel pre-tokenizer, "Ġ" for a space) loads and
// counts as its merges say, by hand: "hello world" is hello · Ġw · o · r · l · d, "Hello,
// hello" is H · e · llo · , · Ġ · hello; it is never cut into pieces (not SentencePiece's shape).
func TestByteLevelBPE(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpt2-style.json")
	body := `{"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},
"model":{"type":"BPE","vocab":{"h":0,"e":1,"l":2,"o":3,"Ġ":4,"w":5,"r":6,"d":7,"he":8,"ll":9,"llo":10,"hello":11,"Ġw":12,"H":13,",":14},
"merges":["h e","l l","ll o","he llo","Ġ w"]}}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tk, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		want int
	}{{"hello world", 6}, {"hello", 1}, {"Hello, hello", 6}} {
		if got, err := tk.Count(c.text); err != nil || got != c.want || tk.split {
			t.Errorf("Count(%q) = %d, %v (split %v); want %d", c.text, got, err, tk.split, c.want)
		}
	}
}
