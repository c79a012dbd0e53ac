package campaigndir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// campaignDir makes a campaign directory of slug under root holding a recorded atlas.
func campaignDir(t *testing.T, root, slug string) string {
	t.Helper()
	d := filepath.Join(root, slug+"-dir")
	if err := WriteInfo(d, Info{Campaign: slug}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(Abs(d, Atlas()), []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(Abs(d, CellDir("a")), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func realDir(t *testing.T, d string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCheckTarget(t *testing.T) {
	root := t.TempDir()
	d := campaignDir(t, root, "tiny")
	plain := filepath.Join(root, "plain")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(plain, "old.pdf")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(plain, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(plain, "link")
	if err := os.Symlink(d, link); err != nil {
		t.Fatal(err)
	}
	fileLink, atlasLink := filepath.Join(plain, "file-link.pdf"), filepath.Join(plain, "atlas-link.jsonl")
	dangling, fifoLink := filepath.Join(plain, "dangling.pdf"), filepath.Join(plain, "fifo-link")
	for link, to := range map[string]string{fileLink: file, atlasLink: Abs(d, Atlas()), dangling: "nowhere.pdf", fifoLink: fifo} {
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		path   string
		target Target
		inside string // the Rel of the InsideError wanted
		err    string // else the error wanted ("" = none)
	}{
		{path: "", target: TargetFile, err: `"" is not a path`},
		{path: "", target: TargetFolder, err: `"" is not a path`},
		{path: Abs(d, Atlas()), target: TargetFile, inside: "atlas.jsonl"},
		{path: Abs(d, Report()), target: TargetFile, inside: "report.pdf"},
		{path: Config(d), target: TargetFile, inside: "config.yaml"},
		{path: filepath.Join(d, "new.html"), target: TargetFile, inside: "new.html"},
		{path: Abs(d, CellDir("a")) + "/new.json", target: TargetFile, inside: "cells/a/new.json"},
		{path: filepath.Join(link, "atlas.jsonl"), target: TargetFile, inside: "atlas.jsonl"},
		{path: d, target: TargetFile, err: "is a folder: name a file"},
		{path: plain, target: TargetFile, err: "is a folder: name a file"},
		{path: fifo, target: TargetFile, err: "is a named pipe (FIFO), which perfdag would replace: name a regular file"},
		{path: fileLink, target: TargetFile},
		{path: atlasLink, target: TargetFile, inside: "atlas.jsonl"},
		{path: dangling, target: TargetFile, err: "dangling.pdf is a symbolic link to nowhere.pdf, which cannot be used: stat "},
		{path: fifoLink, target: TargetFile, err: "fifo-link is a named pipe (FIFO), which perfdag would replace: name a regular file"},
		{path: filepath.Join(root, "nowhere", "x.pdf"), target: TargetFile, err: "the folder " + filepath.Join(root, "nowhere") + " does not exist: create it first"},
		{path: filepath.Join(file, "x.pdf"), target: TargetFile, err: "is not a folder"},
		{path: plain + "/", target: TargetFile, err: "is a folder"},
		{path: filepath.Join(plain, "new.pdf"), target: TargetFile},
		{path: file, target: TargetFile},
		{path: d, target: TargetFolder, inside: "."},
		{path: realDir(t, d), target: TargetFolder, inside: "."},
		{path: "/dev/null", target: TargetFile, err: "/dev/null is a device, which perfdag would replace: name a regular file"},
		{path: filepath.Join(d, "tpm"), target: TargetFolder, inside: "tpm"},
		{path: link, target: TargetFolder, inside: "."},
		{path: file, target: TargetFolder, err: "exists and is not a folder"},
		{path: filepath.Join(file, "sub"), target: TargetFolder, err: "is a file, so"},
		{path: filepath.Join(plain, "a", "b"), target: TargetFolder},
		{path: plain, target: TargetFolder},
		{path: d, target: TargetCampaign},
		{path: link, target: TargetCampaign},
		{path: filepath.Join(plain, "new-campaign"), target: TargetCampaign},
		{path: filepath.Join(d, "nested"), target: TargetCampaign, inside: "nested"},
		{path: Abs(d, CellDir("a")), target: TargetCampaign, inside: "cells/a"},
	} {
		err := CheckTarget(tc.path, tc.target)
		var in *InsideError
		switch {
		case tc.inside != "":
			if !errors.As(err, &in) {
				t.Errorf("CheckTarget(%q, %d) = %v, want inside %s", tc.path, tc.target, err, d)
				continue
			}
			realD, _ := filepath.EvalSymlinks(d)
			if in.Dir != realD || in.Campaign != "tiny" || in.Rel != tc.inside || in.Path != tc.path {
				t.Errorf("CheckTarget(%q, %d) = %+v, want dir %s, campaign tiny, rel %s", tc.path, tc.target, in, realD, tc.inside)
			}
			where := " is inside campaign tiny's directory "
			if tc.inside == "." {
				where = " is campaign tiny's directory "
			}
			if tc.path == realD {
				where, realD = " is campaign tiny's directory", ""
			}
			want := tc.path + where + realD + ", which holds only what its steps recorded: write it elsewhere"
			if tc.inside == Report() {
				want += ", or re-render the recorded report.pdf through its render step with 'perfdag report " + realD + "' (no --out)"
			}
			if msg := err.Error(); msg != want {
				t.Errorf("message %q", msg)
			}
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || errors.As(err, &in) {
				t.Errorf("CheckTarget(%q, %d) = %v, want %q", tc.path, tc.target, err, tc.err)
			}
		case err != nil:
			t.Errorf("CheckTarget(%q, %d) = %v, want nil", tc.path, tc.target, err)
		}
	}
}

// TestOwner: run.json names the campaign, else a calibration does; a frozen config beside a
// journal marks a campaign directory whose run.json was lost or garbled; another tool's
// run.json or calibration.json does not, nor a journal alone; a FIFO named run.json neither
// blocks nor counts.
func TestOwner(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, files map[string]string) string {
		d := filepath.Join(root, name)
		for rel, body := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(d, rel)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, rel), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	fifoDir := mk("fifo", nil)
	if err := syscall.Mkfifo(RunInfo(fifoDir), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir      string
		campaign string
		ok       bool
	}{
		{mk("run", map[string]string{runFile: `{"campaign": "a"}`, calibration: `{"campaign": "b"}`}), "a", true},
		{mk("calibrated", map[string]string{calibration: `{"schema": "calibration_v1", "campaign": "b"}`}), "b", true},
		{mk("garbled", map[string]string{runFile: "not json", configFile: "version: 1", stateDir + "/" + journalFile: "{}\n"}), "", true},
		{mk("journal", map[string]string{stateDir + "/" + journalFile: "{}\n"}), "", false},
		{mk("other-tool", map[string]string{runFile: `{"name": "x"}`, calibration: `{"campaign": "y"}`}), "", false},
		{mk("notes", map[string]string{"notes.txt": "hi", configFile: "x: 1"}), "", false},
		{fifoDir, "", false},
	} {
		if c, ok := Owner(tc.dir); c != tc.campaign || ok != tc.ok {
			t.Errorf("Owner(%s) = %q, %v; want %q, %v", filepath.Base(tc.dir), c, ok, tc.campaign, tc.ok)
		}
	}
	if err := CheckOwner(filepath.Join(root, "run"), "a"); err != nil {
		t.Errorf("own campaign: %v", err)
	}
	if err := CheckOwner(filepath.Join(root, "notes"), "a"); err != nil {
		t.Errorf("no campaign's: %v", err)
	}
	err := CheckOwner(filepath.Join(root, "calibrated"), "a")
	if err == nil || !strings.Contains(err.Error(), "calibrated is the directory of campaign b, not of a: give a's own directory") {
		t.Errorf("another campaign's: %v", err)
	}
}
