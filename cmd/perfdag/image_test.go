package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit"
)

// imageCopies is what the Dockerfile's final stage holds: each COPY line, and the host path
// standing in for the build stage's source.
var imageCopies = []struct{ line, hostSrc, dst string }{
	{"COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt", "/etc/ssl/certs/ca-certificates.crt", "etc/ssl/certs/ca-certificates.crt"},
	{"COPY --from=build /usr/share/zoneinfo /usr/share/zoneinfo", "/usr/share/zoneinfo", "usr/share/zoneinfo"},
	{"COPY --from=build /out/tmp /tmp", "", "tmp"},
	{"COPY --from=build /out/perfdag /perfdag", "", "perfdag"},
}

// The container image, without Docker: the Dockerfile's build flags and final-stage files are
// the ones checked here; the same static binary runs the quickstart in an empty root holding
// only those files (plus the campaign file, as a mounted volume would), inside a user namespace.
func TestImageRootRunsQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a static binary and runs the quickstart (~1 min)")
	}
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	const build = `CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/perfdag ./cmd/perfdag`
	for _, want := range []string{"FROM golang:1.26 AS build", build, "FROM scratch", "USER 65532:65532", `ENTRYPOINT ["/perfdag"]`} {
		if !strings.Contains(string(df), want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	var copies []string
	for _, l := range strings.Split(string(df), "\n") {
		if strings.HasPrefix(l, "COPY --from=build") {
			copies = append(copies, l)
		}
	}
	if len(copies) != len(imageCopies) {
		t.Fatalf("Dockerfile's final stage copies %q; this test replicates %d files", copies, len(imageCopies))
	}
	for i, c := range imageCopies {
		if copies[i] != c.line {
			t.Fatalf("Dockerfile COPY %d is %q, the test replicates %q", i, copies[i], c.line)
		}
	}
	// a user namespace where the kernel allows one; as root, a plain chroot serves as well
	chroot := testkit.NeedTool(t, "chroot")
	enter := []string{chroot}
	if unshare, err := exec.LookPath("unshare"); err == nil {
		if out, err := exec.Command(unshare, "-r", "true").CombinedOutput(); err == nil {
			enter = []string{unshare, "-r", chroot}
		} else if os.Geteuid() != 0 {
			testkit.Unavailable(t, "user namespaces are not available (unshare -r true: "+strings.TrimSpace(string(out))+") and the test is not root")
		}
	} else if os.Geteuid() != 0 {
		testkit.Unavailable(t, "neither unshare nor root is available to enter the image root")
	}

	root := t.TempDir()
	for _, c := range imageCopies {
		dst := filepath.Join(root, c.dst)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		switch c.dst {
		case "tmp":
			if err := os.Mkdir(dst, 0o777|os.ModeSticky); err != nil {
				t.Fatal(err)
			}
		case "perfdag":
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			// the Dockerfile's flags but -trimpath, which only rewrites file paths in the binary
			// and would recompile every dependency outside the test build's cache (minutes)
			cmd := exec.CommandContext(ctx, "go", "build", "-ldflags", "-s -w -X main.version=image-test", "-o", dst, ".")
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			out, err := cmd.CombinedOutput()
			cancel()
			if err != nil {
				t.Fatalf("static build: %v\n%s", err, out)
			}
		default:
			if _, err := os.Stat(c.hostSrc); err != nil {
				testkit.Unavailable(t, c.hostSrc+" is missing on this machine")
			}
			if out, err := exec.Command("cp", "-a", c.hostSrc, dst).CombinedOutput(); err != nil {
				t.Fatalf("cp %s: %v\n%s", c.hostSrc, err, out)
			}
		}
	}
	if out, err := exec.Command("file", filepath.Join(root, "perfdag")).CombinedOutput(); err == nil && !strings.Contains(string(out), "statically linked") {
		t.Errorf("the binary is not static: %s", out)
	}
	if err := os.Mkdir(filepath.Join(root, "campaign"), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../pipelines/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "campaign", "quickstart.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, enter[0], append(enter[1:], root, "/perfdag", "run", "/campaign/quickstart.yaml", "--out", "/tmp/c")...)
	cmd.Env = []string{} // an image has no environment beyond what the pod sets
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("quickstart in the image root: %v\n%s", err, out.String())
	}
	dir := filepath.Join(root, "tmp", "c")
	for _, f := range []string{filepath.Join(dir, campaigndir.Report()), filepath.Join(dir, campaigndir.Atlas()), campaigndir.RunInfo(dir)} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty in the image root after the run (%v)\n%s", f, err, out.String())
		}
	}
	rj, _ := os.ReadFile(campaigndir.RunInfo(dir))
	if !bytes.Contains(rj, []byte("image-test")) {
		t.Errorf("run.json does not record the version set with -X main.version: %s", rj)
	}
}
