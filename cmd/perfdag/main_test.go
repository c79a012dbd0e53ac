package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// childEnv makes the test binary act as perfdag itself (the crash test SIGKILLs it).
const childEnv = "PERFDAG_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	testscript.Main(m, map[string]func(){
		"perfdag": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI behaviour scripts in testdata/script (txtar: commands, files,
// expected output and exit status).
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
	})
}
