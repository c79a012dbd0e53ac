package load

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/engine/diag"
)

// base is a valid campaign; limit tests append hostile parts under x- keys (ignored by the
// schema), so the only problem a file can have is the limit under test.
const base = "version: 1\ncampaign: c\nendpoints:\n  main: {url: \"sim://\", model: m}\ncells:\n  - {id: a, workload: {shape: aa-1k}, concurrencies: [1, 2]}\n"

// classes returns the classes of a file's problems (empty strings for unclassed ones).
func classes(l diag.List) []string {
	var out []string
	for _, d := range l {
		out = append(out, d.Class)
	}
	return out
}

// wantLimit asserts exactly one problem, of class, at line:col.
func wantLimit(t *testing.T, l diag.List, class string, line, col int) {
	t.Helper()
	if len(l) != 1 || l[0].Class != class || l[0].Line != line || l[0].Col != col {
		t.Fatalf("problems %v (classes %v), want one %s at %d:%d", l, classes(l), class, line, col)
	}
}

func TestFileSizeLimit(t *testing.T) {
	pad := func(n int) string {
		s := base + "# "
		return s + strings.Repeat("x", n-len(s)-1) + "\n"
	}
	at := pad(MaxFileBytes)
	if len(at) != MaxFileBytes {
		t.Fatalf("padding: %d bytes", len(at))
	}
	if _, l := loadSrc(t, "f.yaml", at, nil); l != nil {
		t.Fatalf("a file of exactly %d bytes: %v", MaxFileBytes, l)
	}
	_, l := loadSrc(t, "f.yaml", pad(MaxFileBytes+1), nil)
	// line 7 is the comment line; the first byte past the limit is its newline
	wantLimit(t, l, ClassFileSize, 7, MaxFileBytes-len(base)+1)
	if !strings.Contains(l[0].Message, "256 KiB limit (262144 bytes)") {
		t.Errorf("message %q does not state the limit", l[0].Message)
	}

	// A 50 MB file on disk is refused after reading one byte past the limit.
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(base+"# "), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 50<<20); err != nil {
		t.Fatal(err)
	}
	_, err := File(big, testRegistry(t), Options{})
	var dl diag.List
	if !errors.As(err, &dl) || len(dl) != 1 || dl[0].Class != ClassFileSize {
		t.Fatalf("50 MB file: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := File(fifo, testRegistry(t), Options{}); !errors.Is(err, bounded.ErrNotRegular) {
		t.Fatalf("FIFO: %v, want not_regular_file", err)
	}
}

func TestDepthLimit(t *testing.T) {
	flow := func(k int) string { return base + "x-deep: " + strings.Repeat("[", k) + strings.Repeat("]", k) + "\n" }
	if _, l := loadSrc(t, "d.yaml", flow(MaxDepth-1), nil); l != nil {
		t.Fatalf("depth %d (the key plus %d brackets): %v", MaxDepth, MaxDepth-1, l)
	}
	_, l := loadSrc(t, "d.yaml", flow(MaxDepth), nil)
	wantLimit(t, l, ClassDepth, 7, len("x-deep: ")+MaxDepth)
	_, l = loadSrc(t, "d.yaml", flow(100_000), nil)
	wantLimit(t, l, ClassDepth, 7, len("x-deep: ")+MaxDepth)

	block := func(k int) string {
		var b strings.Builder
		b.WriteString(base)
		for i := range k {
			fmt.Fprintf(&b, "%sx-k%d:\n", strings.Repeat(" ", i), i)
		}
		return b.String()
	}
	if _, l := loadSrc(t, "d.yaml", block(MaxDepth), nil); l != nil {
		t.Fatalf("block depth %d: %v", MaxDepth, l)
	}
	_, l = loadSrc(t, "d.yaml", block(MaxDepth+1), nil)
	wantLimit(t, l, ClassDepth, 7+MaxDepth, MaxDepth+1) // at the key x-k100
}

// expandedBytes is the alias pass's running total for a file, to build files at the limit.
func expandedBytes(t *testing.T, src string) int {
	t.Helper()
	f, err := parser.Parse(lexer.Tokenize(src), 0)
	if err != nil {
		t.Fatal(err)
	}
	var l diag.List
	p := &aliasPass{d: newDecoder("e", &l), anchors: map[string]ast.Node{}, memo: map[ast.Node]expansion{}, active: map[ast.Node]bool{}}
	p.walk(f.Docs[0].Body, 0)
	return p.total.bytes
}

func TestAliasLimits(t *testing.T) {
	list := func(n int) string { return base + "x-a: &a 1\nx-list: [" + strings.Repeat("*a, ", n) + "]\n" }
	if _, l := loadSrc(t, "a.yaml", list(MaxAliases), nil); l != nil {
		t.Fatalf("%d aliases: %v", MaxAliases, l)
	}
	_, l := loadSrc(t, "a.yaml", list(MaxAliases+1), nil)
	wantLimit(t, l, ClassAliases, 8, len("x-list: [")+4*MaxAliases+1)

	// Expanded bytes: 400 aliases of a 10 kB string, padded to land exactly on the limit.
	str := strings.Repeat("s", 10_000)
	sized := func(pad int) string {
		return base + "x-pad: \"" + strings.Repeat("p", pad) + "\"\nx-s: &s " + str + "\nx-list: [" + strings.Repeat("*s, ", 400) + "]\n"
	}
	pad := MaxExpandedBytes - expandedBytes(t, sized(0))
	if pad < 0 || pad > 200_000 {
		t.Fatalf("padding %d: adjust the test's sizes", pad)
	}
	if _, l := loadSrc(t, "a.yaml", sized(pad), nil); l != nil {
		t.Fatalf("exactly %d expanded bytes: %v", MaxExpandedBytes, l)
	}
	_, l = loadSrc(t, "a.yaml", sized(pad+1), nil)
	wantLimit(t, l, ClassExpansion, 9, len("x-list: [")+4*399+1)
}

func TestBillionLaughs(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\ncampaign: c\nendpoints:\n  main: {url: \"sim://\", model: m}\nx-lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "x-lol%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), ", "))
	}
	b.WriteString("cells:\n  - {id: a, workload: {shape: aa-1k, extra_body: {lol: *l9}}, concurrencies: [1], extra: {lol: *l9}}\n")
	_, l := loadSrc(t, "laughs.yaml", b.String(), nil)
	// x-lol1..4 expand to 918 + 7380 aliases; the first *l4 of x-lol5 adds 7381 more
	wantLimit(t, l, ClassAliases, 10, 14)
}

func TestAliasCyclesAndDangling(t *testing.T) {
	tests := []struct {
		src, class, msg string
		line, col       int
	}{
		{"&a [*a]", ClassAliasCycle, "alias *a is inside its own anchor &a", 1, 5},
		{base + "x-c: &c {k: [*c]}\n", ClassAliasCycle, "alias *c is inside its own anchor &c", 7, 14},
		{base + "x-d: *nowhere\n", "", "alias *nowhere refers to no anchor defined before it", 7, 6},
		{base + "x-e: *later\nx-f: &later 1\n", "", "alias *later refers to no anchor defined before it", 7, 6},
	}
	for _, tt := range tests {
		_, l := loadSrc(t, "c.yaml", tt.src, nil)
		if len(l) != 1 || l[0].Class != tt.class || !strings.Contains(l[0].Message, tt.msg) || l[0].Line != tt.line || l[0].Col != tt.col {
			t.Errorf("%q: %v (classes %v), want %q at %d:%d", tt.src, l, classes(l), tt.msg, tt.line, tt.col)
		}
	}
}
