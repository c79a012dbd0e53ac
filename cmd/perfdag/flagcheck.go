package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Flag annotations the root command checks before any command runs (checkFlags), so a bad
// value is refused with exit 2 however the command would have used it.
const (
	rangeAnnotation  = "perfdag/range"  // lo, hi, and what the bound is
	targetAnnotation = "perfdag/target" // the campaigndir.Target a path flag names
)

// bound gives numeric flag name the range [lo, hi]; as says where the bound comes from, for
// the message (every numeric flag has one: TestNumericFlagsBounded).
func bound(fs *pflag.FlagSet, name string, lo, hi float64, as string) {
	must(fs.SetAnnotation(name, rangeAnnotation, []string{schema.FormatBound(lo), schema.FormatBound(hi), as}))
}

// boundAs gives numeric flag name the range of the campaign-file key it sets too (field of T,
// spelled key in the file), so a flag never takes what the file would refuse.
func boundAs[T any](fs *pflag.FlagSet, name, field, key string) {
	lo, hi := schema.FieldRange[T](field)
	bound(fs, name, lo, hi, "as "+key+" in a campaign file")
}

// output marks path flag name as one naming something perfdag writes (campaigndir.CheckTarget).
func output(fs *pflag.FlagSet, name string, t campaigndir.Target) {
	must(fs.SetAnnotation(name, targetAnnotation, []string{strconv.Itoa(int(t))}))
}

func must(err error) {
	if err != nil {
		panic(err) // a flag that does not exist: a programming error
	}
}

// checkFlags refuses, with exit 2 and the flag's name, a numeric flag given outside its range
// (or NaN) and a path flag naming what perfdag may not write.
func checkFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		if r := f.Annotations[rangeAnnotation]; len(r) == 3 {
			v, perr := strconv.ParseFloat(f.Value.String(), 64)
			lo, _ := strconv.ParseFloat(r[0], 64)
			hi, _ := strconv.ParseFloat(r[1], 64)
			if perr != nil || math.IsNaN(v) || v < lo || v > hi {
				err = exitf(ExitUsage, "--%s %s: must be between %s and %s (%s)", f.Name, f.Value, r[0], r[1], r[2])
			}
		}
		if t := f.Annotations[targetAnnotation]; len(t) == 1 {
			target, _ := strconv.Atoi(t[0])
			if cerr := campaigndir.CheckTarget(f.Value.String(), campaigndir.Target(target)); cerr != nil {
				err = exit(ExitUsage, fmt.Errorf("--%s: %w", f.Name, cerr))
			}
		}
	})
	return err
}
