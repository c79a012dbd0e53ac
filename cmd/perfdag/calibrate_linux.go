package main

import "syscall"

// childAttr makes the kernel end the simulator when perfdag dies (even by SIGKILL).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
