package jsonl

import "syscall"

// flock takes (exclusive) or releases a whole-file lock, waiting for other holders.
func flock(fd int, lock bool) error {
	how := syscall.LOCK_UN
	if lock {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(fd, how)
		if err != syscall.EINTR {
			return err
		}
	}
}
