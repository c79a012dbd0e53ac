package main

import (
	"errors"
	"fmt"
)

// Exit codes, by failure class (documented in the README and `perfdag --help`).
const (
	ExitOK          = 0   // success (validate: the files are valid)
	ExitFailed      = 1   // a step failed (validate: a file is invalid)
	ExitUsage       = 2   // bad flags or arguments
	ExitInvalid     = 3   // the campaign file is invalid
	ExitRefused     = 4   // a fail-severity gate, or strict publish, refused
	ExitInterrupted = 130 // interrupted by SIGINT/SIGTERM
)

// exitError carries an exit code up to Main; an empty message prints nothing more.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func exit(code int, err error) error { return &exitError{code: code, err: err} }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// codeOf maps an error to its exit code.
func codeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitFailed
}
