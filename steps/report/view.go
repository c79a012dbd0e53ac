package report

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/report/charts"
)

// variantKey is a row's identity minus max_num_batched_tokens and concurrency: one series.
type variantKey struct {
	Model, Hardware, Quant string
	TP                     int
	Strategy               string
	MTP                    bool
	Engine, Shape, Cache   string
	Arm                    string
}

// variant is one series of the scatter panes and one row of the heatmaps.
type variant struct {
	key    variantKey
	label  string
	color  color.RGBA
	marker charts.Marker
}

// view is the atlas prepared for the pages: serving rows (roofline imports excluded), their
// variants in a stable order with their styles, the mbt values present, the coverage.
type view struct {
	in        Input
	opt       options
	all       []schema.AtlasRow // every atlas row
	rows      []schema.AtlasRow // serving rows: roofline-import rows excluded
	variants  []*variant
	byKey     map[variantKey]*variant
	mbts      []int
	coverage  atlas.Coverage
	covErr    error
	plotReady int
	// device is what throughput is normalised by: "GPU" when every row names a GPU, "device"
	// for CPUs and unknown hardware (a CPU run is never labelled tok/s/GPU).
	device string
}

// gpuNames are hardware name prefixes that identify a GPU or accelerator.
var gpuNames = []string{"A100", "A10", "A30", "A40", "H100", "H200", "H20", "H800", "B200", "GB200", "B300", "GB300", "L4", "L40", "MI2", "MI3", "RTX", "GPU", "TPU", "GAUDI"}

func isGPU(h string) bool {
	h = strings.ToUpper(strings.TrimSpace(h))
	for _, g := range gpuNames {
		if strings.HasPrefix(h, g) {
			return true
		}
	}
	return false
}

// dev rewrites a label's "GPU" to the campaign's device word.
func (v *view) dev(s string) string {
	if v.device == "GPU" {
		return s
	}
	return strings.ReplaceAll(s, "GPU", v.device)
}

// hardwareOrder sorts GPU generations oldest first; unknown names sort after, alphabetically.
var hardwareOrder = []string{"A100", "H100", "H200", "H20", "B200", "GB200", "B300", "GB300"}

func hwRank(h string) int {
	if i := slices.Index(hardwareOrder, strings.ToUpper(h)); i >= 0 {
		return i
	}
	return len(hardwareOrder)
}

func keyOf(r *schema.AtlasRow) variantKey {
	return variantKey{Model: r.Model, Hardware: r.Hardware, Quant: r.Quant, TP: r.TensorParallel,
		Strategy: strings.ToUpper(r.ParallelStrategy), MTP: r.MTP, Engine: r.Engine, Shape: r.Shape,
		Cache: r.CacheMode, Arm: r.Arm}
}

func compareVariant(a, b variantKey) int {
	return cmp.Or(
		cmp.Compare(hwRank(a.Hardware), hwRank(b.Hardware)), cmp.Compare(a.Hardware, b.Hardware),
		cmp.Compare(a.Quant, b.Quant), cmp.Compare(a.TP, b.TP), cmp.Compare(a.Strategy, b.Strategy),
		cmp.Compare(boolInt(a.MTP), boolInt(b.MTP)), cmp.Compare(a.Engine, b.Engine),
		cmp.Compare(a.Shape, b.Shape), cmp.Compare(a.Cache, b.Cache), cmp.Compare(a.Arm, b.Arm),
		cmp.Compare(a.Model, b.Model))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func newView(in Input) *view {
	v := &view{in: in, opt: optionsOf(in.Campaign, measuredConcurrencies(in.Atlas)), all: in.Atlas, byKey: map[variantKey]*variant{}}
	v.coverage, v.covErr = atlas.Aggregate(io.Discard, in.Atlas...)
	for _, r := range in.Atlas {
		if r.Backend == schema.RooflineBackend {
			continue
		}
		v.rows = append(v.rows, r)
		if r.PlotReady {
			v.plotReady++
		}
		k := keyOf(&r)
		if v.byKey[k] == nil {
			v.byKey[k] = &variant{key: k}
			v.variants = append(v.variants, v.byKey[k])
		}
		if !slices.Contains(v.mbts, r.MaxNumBatchedTokens) {
			v.mbts = append(v.mbts, r.MaxNumBatchedTokens)
		}
	}
	v.device = "GPU"
	for _, r := range v.rows {
		if !isGPU(r.Hardware) {
			v.device = "device"
			break
		}
	}
	slices.Sort(v.mbts)
	slices.SortFunc(v.variants, func(a, b *variant) int { return compareVariant(a.key, b.key) })
	v.style()
	return v
}

// style names every variant by the identity fields that differ across the campaign (the arm
// only where it is needed to tell two apart) and gives
// it its colour (one per hardware and TP degree) and marker (circle EP, X TP; hollow = MTP).
func (v *view) style() {
	differs := func(f func(variantKey) string) bool {
		seen := map[string]bool{}
		for _, x := range v.variants {
			seen[f(x.key)] = true
		}
		return len(seen) > 1
	}
	showModel := differs(func(k variantKey) string { return k.Model })
	showEngine := differs(func(k variantKey) string { return k.Engine })
	showShape := differs(func(k variantKey) string { return k.Shape })
	showCache := differs(func(k variantKey) string { return k.Cache })

	colorIdx := map[string]int{}
	for _, x := range v.variants {
		k := x.key
		parts := []string{k.Hardware, k.Quant, tpPart(k.TP)}
		if k.Strategy != "" {
			parts = append(parts, k.Strategy)
		}
		if k.MTP {
			parts = append(parts, "MTP")
		}
		for _, opt := range []struct {
			show bool
			val  string
		}{{showEngine, k.Engine}, {showShape, k.Shape}, {showCache, k.Cache}, {showModel, shortModel(k.Model)}} {
			if opt.show && opt.val != "" {
				parts = append(parts, opt.val)
			}
		}
		x.label = strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
		if x.label == "" { // nothing declared about hardware or parallelism: the model names it
			x.label = cmp.Or(shortModel(k.Model), "all cells")
		}
		// one colour per (hardware, TP, and every other field that differs: shape, cache,
		// engine, model, arm); strategy and MTP are carried by the marker.
		ck := fmt.Sprintf("%s/%d/%s", k.Hardware, k.TP, k.Arm)
		for _, opt := range []struct {
			show bool
			val  string
		}{{showEngine, k.Engine}, {showShape, k.Shape}, {showCache, k.Cache}, {showModel, k.Model}} {
			if opt.show {
				ck += "/" + opt.val
			}
		}
		if _, ok := colorIdx[ck]; !ok {
			colorIdx[ck] = len(colorIdx)
		}
		x.color = charts.Color(colorIdx[ck])
		x.marker = charts.Circle
		if k.Strategy == "TP" {
			x.marker = charts.Cross
		}
	}
	// Champion arms name cells; the arm joins the label only when it tells variants apart.
	seen := map[string]int{}
	for _, x := range v.variants {
		seen[x.label]++
	}
	for _, x := range v.variants {
		if seen[x.label] > 1 && x.key.Arm != "" {
			x.label += " [" + x.key.Arm + "]"
		}
	}
}

// shortModel drops an organisation prefix: "moonshotai/Kimi-K2.6" → "Kimi-K2.6".
// tpPart names a tensor-parallel degree in a label, nothing when the campaign does not state
// it (0): "TP0" would read as a configuration.
func tpPart(tp int) string {
	if tp <= 0 {
		return ""
	}
	return fmt.Sprintf("TP%d", tp)
}

func shortModel(m string) string {
	if i := strings.LastIndex(m, "/"); i >= 0 {
		return m[i+1:]
	}
	return m
}

// variantOf returns the variant of a serving row.
func (v *view) variantOf(r *schema.AtlasRow) *variant { return v.byKey[keyOf(r)] }

// hasFlag reports whether a row carries a flag.
func hasFlag(r *schema.AtlasRow, f string) bool { return slices.Contains(r.Flags, f) }

// pointStatus is the atlas' extra["point_status"] (ok, partial, failed, missing), or "" when absent.
func pointStatus(r *schema.AtlasRow) string {
	s, _ := r.Extra["point_status"].(string)
	return s
}

// coverageLine is the seed's coverage line, computed from the atlas rows.
func (v *view) coverageLine() string { return v.coverage.String() }
