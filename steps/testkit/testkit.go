// Package testkit holds test helpers shared by the step packages: above all the rule that a
// test needing an outside tool skips with a reason on a developer machine but fails in CI.
package testkit

import (
	"os"
	"os/exec"
	"testing"
)

// NoSkipEnv, when set to 1 (as .ci/run does), turns every skip for a missing tool into a failure.
const NoSkipEnv = "PERFDAG_NO_SKIP"

// Unavailable skips the test with reason, or fails it when CI forbids skipping.
func Unavailable(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv(NoSkipEnv) == "1" {
		t.Fatalf("%s (and %s=1 forbids skipping)", reason, NoSkipEnv)
	}
	t.Skip(reason)
}

// NeedTool returns the path of an outside program, or skips (fails in CI) when it is missing.
func NeedTool(t testing.TB, name string, alternatives ...string) string {
	t.Helper()
	for _, n := range append([]string{name}, alternatives...) {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	Unavailable(t, name+" is not installed")
	return ""
}
