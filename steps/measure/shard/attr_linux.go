package shard

import "syscall"

// childAttr makes the kernel end a child when its coordinator dies (even by SIGKILL).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
