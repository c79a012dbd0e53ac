package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPeersDir: $PERFDAG_PEERS wins; otherwise a shared/peers holding the server beside the
// module root or one of its ancestors is found from any package directory, and one without the
// server binary is not.
func TestPeersDir(t *testing.T) {
	t.Setenv(PeersEnv, "/some/where")
	if got := PeersDir(); got != "/some/where" {
		t.Errorf("PeersDir() = %q with %s set, want it", got, PeersEnv)
	}
	t.Setenv(PeersEnv, "")

	root := t.TempDir()
	module := filepath.Join(root, "work", "checkout")
	pkg := filepath.Join(module, "steps", "measure")
	mkdir(t, pkg)
	write(t, filepath.Join(module, "go.mod"), "module example\n")
	// a shared/peers beside the checkout without the binary is passed over ...
	mkdir(t, filepath.Join(root, "work", "shared", "peers", "models"))
	t.Chdir(pkg)
	if got := PeersDir(); got != "" {
		t.Errorf("PeersDir() = %q with no server anywhere, want \"\"", got)
	}
	// ... one an ancestor further up that holds it is found ...
	far := filepath.Join(root, "shared", "peers")
	write(t, filepath.Join(far, "llama.cpp", "bin", "llama-server"), "")
	if got := PeersDir(); got != far {
		t.Errorf("PeersDir() = %q, want the ancestor's %q", got, far)
	}
	// ... and the nearest one wins once it holds the server.
	near := filepath.Join(root, "work", "shared", "peers")
	write(t, filepath.Join(near, "llama.cpp", "bin", "llama-server"), "")
	if got := PeersDir(); got != near {
		t.Errorf("PeersDir() = %q, want the nearest %q", got, near)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}
