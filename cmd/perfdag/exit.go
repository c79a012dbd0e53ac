package main

import (
	"fmt"

	"github.com/perfdag/perfdag/engine/campaign"
)

// Exit codes, by failure class (documented in the README, docs/commands.md and `perfdag --help`); the codes
// travel with the errors the campaign service returns.
const (
	ExitOK          = campaign.CodeOK
	ExitFailed      = campaign.CodeFailed
	ExitUsage       = campaign.CodeUsage
	ExitInvalid     = campaign.CodeInvalid
	ExitRefused     = campaign.CodeRefused
	ExitInterrupted = campaign.CodeInterrupted
)

func exit(code int, err error) error { return campaign.Coded(code, err) }

func exitf(code int, format string, args ...any) error {
	return campaign.Coded(code, fmt.Errorf(format, args...))
}

// codeOf maps an error to its exit code.
func codeOf(err error) int { return campaign.CodeOf(err) }
