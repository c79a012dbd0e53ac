//go:build !linux

package main

import "syscall"

// childAttr: without Linux's parent-death signal, the simulator is ended by stop only.
func childAttr() *syscall.SysProcAttr { return nil }
