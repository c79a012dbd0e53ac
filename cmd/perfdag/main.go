// Command perfdag benchmarks LLM inference deployments: a campaign YAML compiles into a DAG
// of typed, checkpointed steps that validates, plans, runs, resumes, gates and publishes.
// This package is the CLI only: flags, output formats and the wiring of the step registry.
package main

import (
	"os"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
