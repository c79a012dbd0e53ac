package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/schema"
)

// importedLengths is how the cover's ISL/OSL line names the basis of imported points.
const importedLengths = "imported points: ISL and OSL as their source tool counted them"

// importedCountsCaveat states what the token counts of imported points are: their source tool's,
// as each file says (schema.ImportedBasis), per source and count, with how many points.
func importedCountsCaveat(bases map[string]int) string {
	var parts []string
	for _, b := range slices.Sorted(maps.Keys(bases)) {
		source, counted, _ := schema.SplitImportedBasis(b)
		parts = append(parts, fmt.Sprintf("%s: %s (%s)", source, counted, plural.N(bases[b], "point")))
	}
	return "Imported token counts: ISL, OSL, ITL and tok/s of imported points rest on their source tool's token counts, none counted by perfdag - " +
		strings.Join(parts, "; ") + "."
}
