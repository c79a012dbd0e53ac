//go:build !linux

package shard

import "syscall"

// childAttr: elsewhere a child ends when its stdin closes (the coordinator gone).
func childAttr() *syscall.SysProcAttr { return nil }
