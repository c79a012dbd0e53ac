package dcgmcorrelate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/perfdag/perfdag/engine/bounded"
)

// secret is text of a file outside the campaign; it must never appear in an error or a detail.
const secret = "s3cr3t-line-from-elsewhere"

func TestLoadFrozenOutsideIsSealed(t *testing.T) {
	valid, err := os.ReadFile("../../testdata/dcgm/frozen-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	campaignDir, elsewhere := t.TempDir(), t.TempDir()
	write := func(dir, name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withSecret := []byte(strings.Replace(string(valid), "hostname: gpu-node-7", "hostname: gpu-node-7\n"+secret+": 1", 1))
	sourced := []byte(strings.Replace(string(valid), "dcgmi dmon", secret+" dcgmi dmon", 1))
	write(campaignDir, "in/a.yaml", valid)
	bad := write(elsewhere, "bad.yaml", withSecret)
	good := write(elsewhere, "good.yaml", sourced)
	if err := os.Symlink(bad, filepath.Join(campaignDir, "escape.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(campaignDir, "fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}

	if _, err := loadFrozen(campaignDir, &Params{File: "in/{cell}.yaml"}, "a"); err != nil {
		t.Fatalf("a file inside the tree: %v", err)
	}
	if _, err := loadFrozen(campaignDir, &Params{File: bad}, "a"); !errors.Is(err, ErrOutsideCampaign) {
		t.Fatalf("outside without opting in: %v, want outside_campaign", err)
	}
	if _, err := loadFrozen(campaignDir, &Params{File: "escape.yaml"}, "a"); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Fatalf("a symlink leaving the tree: %v, want a refusal", err)
	}
	if _, err := loadFrozen(campaignDir, &Params{File: "fifo.yaml"}, "a"); !errors.Is(err, bounded.ErrNotRegular) {
		t.Fatalf("a FIFO: %v, want not_regular_file", err)
	}
	if _, err := loadFrozen(campaignDir, &Params{File: "/dev/zero", AllowOutsideCampaign: true}, "a"); !errors.Is(err, bounded.ErrNotRegular) {
		t.Fatalf("/dev/zero: %v, want not_regular_file", err)
	}
	_, err = loadFrozen(campaignDir, &Params{File: bad, AllowOutsideCampaign: true}, "a")
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "is not a valid dcgm_frozen_v1 file") {
		t.Fatalf("an invalid file outside: %v", err)
	}
	// the same problem inside the tree is explained in full
	write(campaignDir, "bad.yaml", withSecret)
	if _, err := loadFrozen(campaignDir, &Params{File: "bad.yaml"}, "a"); err == nil || !strings.Contains(err.Error(), secret) {
		t.Fatalf("an invalid file inside: %v, want its problem named", err)
	}
	src, err := loadFrozen(campaignDir, &Params{File: good, AllowOutsideCampaign: true}, "a")
	if err != nil {
		t.Fatal(err)
	}
	if d := src.Detail(); d != good {
		t.Errorf("detail of a file outside = %q, want its name only", d)
	}
	if d := digestFrozen(campaignDir, &Params{File: good}, "a"); d != "outside the campaign directory" {
		t.Errorf("digest without opting in = %q", d)
	}
}
