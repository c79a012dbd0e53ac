package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/steps/testkit/fixture"
)

// childEnv makes the test binary act as perfdag itself (the crash test SIGKILLs it).
const childEnv = "PERFDAG_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(testApp().main(os.Args[1:]))
	}
	testscript.Main(m, map[string]func(){
		"perfdag": func() { os.Exit(testApp().main(os.Args[1:])) },
	})
}

// testApp is perfdag with the test doubles registered: the fixture kind offers hand-written
// analysis files as a finished campaign's evidence (scripts use it for exact numbers); a child
// given signalAtEnv stops itself at that event.
func testApp() *app {
	return &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, testKinds: []engine.Kind{fixture.Kind}, testObserve: signalAtFromEnv()}
}

// TestScripts runs the CLI behaviour scripts in testdata/script (txtar: commands, files,
// expected output and exit status).
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
	})
}
