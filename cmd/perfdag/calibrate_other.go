//go:build !linux

package main

import "syscall"

// childAttr: without Linux's parent-death signal, the simulator is ended by stop only.
func childAttr() *syscall.SysProcAttr { return nil }

// openFileLimit is unknown here: the ladder climbs to --max-streams.
func openFileLimit() (int, bool) { return 0, false }
