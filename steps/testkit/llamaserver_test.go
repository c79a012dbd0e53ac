package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPeersDir: $PERFDAG_PEERS wins; otherwise what is found holds the server binary, so a
// checkout anywhere on the machine finds the peers of /work/shared or beside it.
func TestPeersDir(t *testing.T) {
	t.Setenv(PeersEnv, "/some/where")
	if got := PeersDir(); got != "/some/where" {
		t.Errorf("PeersDir() = %q with %s set, want it", got, PeersEnv)
	}
	t.Setenv(PeersEnv, "")
	got := PeersDir()
	if got == "" {
		if _, err := os.Stat(filepath.Join(SharedPeers, "llama.cpp", "bin", "llama-server")); err == nil {
			t.Fatalf("PeersDir() found nothing although %s holds the server", SharedPeers)
		}
		return
	}
	if _, err := os.Stat(filepath.Join(got, "llama.cpp", "bin", "llama-server")); err != nil {
		t.Errorf("PeersDir() = %q, which holds no server: %v", got, err)
	}
}
