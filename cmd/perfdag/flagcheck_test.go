package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// boundedFlag is one numeric flag of one command, with its range.
type boundedFlag struct {
	path   []string // the command's words after perfdag
	flag   *pflag.Flag
	lo, hi string
}

// numericFlags walks every command and returns its numeric flags; a numeric flag without a
// range is an error.
func numericFlags(t *testing.T) []boundedFlag {
	t.Helper()
	var out []boundedFlag
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			switch f.Value.Type() {
			case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
				"float32", "float64", "duration", "count", "intSlice", "int32Slice", "int64Slice", "uintSlice", "float32Slice", "float64Slice", "durationSlice":
			default:
				return
			}
			r := f.Annotations[rangeAnnotation]
			if len(r) != 3 || r[2] == "" {
				t.Errorf("perfdag %s --%s (%s) has no range: give it the campaign file's (boundAs) or its own (bound)", strings.Join(path, " "), f.Name, f.Value.Type())
				return
			}
			out = append(out, boundedFlag{path: path, flag: f, lo: r[0], hi: r[1]})
		})
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	a := testApp()
	root := &cobra.Command{Use: "perfdag"}
	for _, c := range a.commands() {
		root.AddCommand(c)
	}
	walk(root, nil)
	return out
}

// TestNumericFlagsBounded: every numeric flag of every command has a range, and a value just
// outside it (or NaN, for a float) is refused with exit 2 naming the flag, the value and the
// range before the command does anything.
func TestNumericFlagsBounded(t *testing.T) {
	flags := numericFlags(t)
	if len(flags) < 20 {
		t.Fatalf("found %d numeric flags, want the 20 or more perfdag has", len(flags))
	}
	for _, bf := range flags {
		lo, _ := strconv.ParseFloat(bf.lo, 64)
		hi, _ := strconv.ParseFloat(bf.hi, 64)
		bad := []string{strconv.FormatFloat(hi+1, 'f', -1, 64), strconv.FormatFloat(lo-1, 'f', -1, 64)}
		if strings.HasPrefix(bf.flag.Value.Type(), "float") {
			bad = append(bad, "NaN", strconv.FormatFloat(hi*1.5+1, 'g', -1, 64))
		}
		for _, v := range bad {
			name := strings.Join(bf.path, " ") + " --" + bf.flag.Name + " " + v
			args := append(append([]string(nil), bf.path...), "--"+bf.flag.Name+"="+v)
			code, stderr := mainWithin(t, args)
			if strings.Contains(stderr, "accepts ") || strings.Contains(stderr, "requires ") { // the command takes arguments
				code, stderr = mainWithin(t, append(args, "x"))
			}
			want := "--" + bf.flag.Name + " "
			if code != ExitUsage || !strings.Contains(stderr, want) || !strings.Contains(stderr, ": must be between "+bf.lo+" and "+bf.hi+" (") {
				t.Errorf("perfdag %s: exit %d, stderr %q; want exit 2 saying the range %s..%s", name, code, stderr, bf.lo, bf.hi)
			}
		}
	}
}

// mainWithin runs the CLI in process, failing the test when it does not return within a
// minute (a bound that did not fire lets the command run: sim would serve forever).
func mainWithin(t *testing.T, args []string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	a := testApp()
	a.stdin, a.stdout, a.stderr = strings.NewReader(""), &stdout, &stderr
	go func() { done <- a.main(args) }()
	select {
	case code := <-done:
		return code, stderr.String()
	case <-time.After(time.Minute):
		t.Fatalf("perfdag %s did not return: its bound did not refuse the value", strings.Join(args, " "))
		return 0, ""
	}
}

// flagLimitsMarkdown is the table of docs/limits.md listing every numeric flag's range.
func flagLimitsMarkdown(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| flag | range | bound |\n| --- | --- | --- |\n")
	for _, bf := range numericFlags(t) {
		fmt.Fprintf(&b, "| `perfdag %s --%s` | %s … %s | %s |\n", strings.Join(bf.path, " "), bf.flag.Name, bf.lo, bf.hi, bf.flag.Annotations[rangeAnnotation][2])
	}
	return b.String()
}
