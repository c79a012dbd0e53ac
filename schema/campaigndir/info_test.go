package campaigndir

import (
	"os"
	"strings"
	"testing"
)

func TestRecordServer(t *testing.T) {
	dir := t.TempDir()
	if err := RecordServer(dir, "local", "llama.cpp build b1"); err != nil {
		t.Fatalf("no run.json: %v", err)
	}
	info := Info{Campaign: "c", Endpoints: []EndpointInfo{{Name: "local", URL: "http://h", Model: "m"}, {Name: "other", Model: "n"}}}
	if err := WriteInfo(dir, info); err != nil {
		t.Fatal(err)
	}
	if err := RecordServer(dir, "local", "llama.cpp build b1"); err != nil {
		t.Fatal(err)
	}
	got, err := ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Endpoints[0].Server != "llama.cpp build b1" || got.Endpoints[1].Server != "" {
		t.Fatalf("endpoints = %+v", got.Endpoints)
	}
	md, err := os.ReadFile(Source(dir))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "- server: llama.cpp build b1") {
		t.Fatalf("SOURCE.md lacks the server:\n%s", md)
	}
}
