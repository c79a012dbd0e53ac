//go:build !unix

package session

import "time"

// processCPU is unknown where getrusage is not.
func processCPU() (time.Duration, bool) { return 0, false }
