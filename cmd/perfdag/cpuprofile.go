package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// cpuProfileEnv names a file to write a CPU profile of the whole command to. It is hidden (not
// in --help): it exists to find where `perfdag smoke` and friends spend their time.
const cpuProfileEnv = "PERFDAG_CPUPROFILE"

// startCPUProfile starts profiling when PERFDAG_CPUPROFILE is set and returns the function
// that stops it; a profile that cannot start is reported on stderr and the command runs anyway.
func startCPUProfile(stderr io.Writer) (stop func()) {
	path := os.Getenv(cpuProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "perfdag: %s: %v\n", cpuProfileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(stderr, "perfdag: %s: %v\n", cpuProfileEnv, err)
		_ = f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "perfdag: %s: %v\n", cpuProfileEnv, err)
		}
	}
}
