package main

import "syscall"

// childAttr makes the kernel end the simulator when perfdag dies (even by SIGKILL).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

// openFileLimit is this process's limit on open files (its soft limit, which Go raised to the
// hard one at start).
func openFileLimit() (int, bool) {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil || l.Cur > 1<<30 {
		return 0, false
	}
	return int(l.Cur), true
}
