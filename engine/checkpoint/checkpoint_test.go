package checkpoint

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema/campaigndir"
)

func TestSaveReopenNewestWins(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"run-shape[aa-10k/c16]", "scrape-spec:before[a/c1]", "aggregate"}
	for i, id := range ids {
		for _, st := range []string{Running, Succeeded} {
			if err := s.Save(&Record{Node: id, Status: st, Digest: id, Attempt: i, StartedAt: time.Unix(1, 0)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Close()
	all, err := ReadOnly(dir).LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(ids) {
		t.Fatalf("loaded %d records, want %d", len(all), len(ids))
	}
	for _, id := range ids {
		if r := all[id]; r == nil || r.Status != Succeeded || r.Digest != id {
			t.Errorf("%s = %+v", id, r)
		}
	}
	if r, err := ReadOnly(dir).Load("never-saved"); r != nil || err != nil {
		t.Errorf("missing record = %+v, %v", r, err)
	}
	if r, err := ReadOnly(t.TempDir()).LoadAll(); len(r) != 0 || err != nil {
		t.Errorf("empty dir = %v, %v", r, err)
	}
}

// A crash mid-append leaves a torn last line: readers ignore it, the next writer trims it, and
// the record it held never counts.
func TestTornLastLineIsNeverTrusted(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	if err := s.Save(&Record{Node: "a", Status: Succeeded}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	path := campaigndir.Journal(dir)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	f.WriteString(`{"node":"b","status":"succ`)
	f.Close()
	all, err := ReadOnly(dir).LoadAll()
	if err != nil || len(all) != 1 || all["b"] != nil {
		t.Fatalf("reader: %v, %v", all, err)
	}
	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(&Record{Node: "c", Status: Succeeded}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	all, err = ReadOnly(dir).LoadAll()
	if err != nil || len(all) != 2 || all["c"] == nil || all["b"] != nil {
		t.Fatalf("after trim and append: %v, %v", all, err)
	}
}

func TestCorruptMiddleLineIsAnError(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(campaigndir.StateDir(dir), 0o755)
	os.WriteFile(campaigndir.Journal(dir), []byte("{\"node\":\"a\"}\n{garbage\n{\"node\":\"b\"}\n"), 0o644)
	if _, err := ReadOnly(dir).LoadAll(); err == nil || !strings.Contains(err.Error(), "corrupt at line 2") {
		t.Fatalf("err = %v", err)
	}
}

func TestCompaction(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	for i := range 200 {
		s.Save(&Record{Node: "a", Status: Succeeded, Attempt: i})
	}
	s.Close()
	s, err := Open(dir) // 200 lines for 1 node: compacted on open
	if err != nil {
		t.Fatal(err)
	}
	s.Save(&Record{Node: "b", Status: Succeeded})
	s.Close()
	b, _ := os.ReadFile(campaigndir.Journal(dir))
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Fatalf("%d lines after compaction, want 2", n)
	}
	all, _ := ReadOnly(dir).LoadAll()
	if all["a"].Attempt != 199 || all["b"] == nil {
		t.Fatalf("after compaction: %+v", all)
	}
}

// BenchmarkSave is the per-node checkpoint cost: one appended, fsynced journal line (a node
// writes two: running, then its outcome).
func BenchmarkSave(b *testing.B) {
	s, _ := Open(b.TempDir())
	defer s.Close()
	r := &Record{Node: "run-shape[aa-10k/c16]", Status: Succeeded, Fingerprint: strings.Repeat("f", 64), Digest: strings.Repeat("d", 64),
		Result: []byte(`{"num_prompts":48,"concurrency":16,"ttft_p50_ms":123.4}`), StartedAt: time.Now(), EndedAt: time.Now()}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Save(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen is a resume's read of a 10,000-node journal (two lines per node).
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	var buf strings.Builder
	for i := range 10000 {
		for _, st := range []string{Running, Succeeded} {
			fmt.Fprintf(&buf, `{"node":"run-shape[c%d]","status":%q,"fingerprint":%q,"result":{"ttft_p50_ms":123.4},"started_at":"2026-01-05T10:00:00Z","attempt":0,"run_id":"r"}`+"\n",
				i, st, strings.Repeat("f", 64))
		}
	}
	s.Close()
	if err := os.WriteFile(campaigndir.Journal(dir), []byte(buf.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		if all, _ := s.LoadAll(); len(all) != 10000 {
			b.Fatalf("loaded %d", len(all))
		}
		s.Close()
	}
}
