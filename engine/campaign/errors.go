package campaign

import "errors"

// Exit codes by failure class: the CLI's, documented in its help, the README and docs/commands.md.
const (
	CodeOK          = 0   // success (validate: the files are valid)
	CodeFailed      = 1   // a step failed (validate: a file is invalid); results are stale
	CodeUsage       = 2   // bad flags or arguments, or a directory that is not a campaign
	CodeInvalid     = 3   // the campaign file is invalid
	CodeRefused     = 4   // a fail-severity gate did not pass, or strict publish refused
	CodeInterrupted = 130 // interrupted by SIGINT/SIGTERM
)

// Error carries an exit code with its cause (go-task's Code() pattern), so the CLI never infers
// a code from a message. An Error without a cause prints nothing more than what was printed.
type Error struct {
	code int
	err  error
}

// Coded wraps err with an exit code.
func Coded(code int, err error) error { return &Error{code: code, err: err} }

func (e *Error) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *Error) Unwrap() error { return e.err }

// Code is the exit code.
func (e *Error) Code() int { return e.code }

// CodeOf is the exit code an error stands for: the code of the first error in its chain that
// has one, else CodeFailed.
func CodeOf(err error) int {
	if err == nil {
		return CodeOK
	}
	var c interface{ Code() int }
	if errors.As(err, &c) {
		return c.Code()
	}
	return CodeFailed
}
