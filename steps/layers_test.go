package steps

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layers is perfdag's import order, lowest first (DESIGN.md's Layout and doc.go): a package
// may import its own group's packages and any group of a lower layer, never a group beside it
// or above it. A group is a folder (with everything under it) or, ending in "=", one package.
// Each step kind is a group of its own: kinds never import kinds. Tests may import anything.
var layers = [][]string{
	{"schema"},
	{"engine"},
	{"steps/catalog"},                            // figures that may need correcting, read by every layer above
	{"steps/measure", "steps/telemetry"},         // load and numbers; what servers and GPUs report
	{"steps/analysis", "steps/sim"},              // what the numbers become; the simulator (a test double)
	{"steps/report", "steps/lake"},               // the PDF and HTML pages; the published tables
	kindGroups(),                                 // the step kinds, each a group of its own
	{"steps=", "steps/calibrate", "steps/webui"}, // the registry; perfdag calibrate; perfdag serve
	{"steps/testkit"},                            // test helpers and doubles
	{"cmd"},
}

// kindGroups is one group per registered step kind, its folder steps/<kind name> (read off the
// registry, so a new kind is placed without editing this file).
func kindGroups() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, "steps/"+k.Name)
	}
	slices.Sort(out)
	return out
}

const module = "github.com/perfdag/perfdag/"

// groupOf is the group and layer of a module package path ("steps/measure/sse"), or "", -1.
func groupOf(pkg string) (string, int) {
	best, at := "", -1
	for i, l := range layers {
		for _, g := range l {
			one, ok := strings.CutSuffix(g, "=")
			if ok && pkg == one || !ok && (pkg == g || strings.HasPrefix(pkg, g+"/")) {
				if name := strings.TrimSuffix(g, "="); len(name) > len(best) {
					best, at = name, i
				}
			}
		}
	}
	return best, at
}

// arrowsUp lists the imports of imports (package → its module imports) that break layers, and
// the packages no layer holds.
func arrowsUp(imports map[string][]string) []string {
	var bad []string
	for pkg, deps := range imports {
		g, l := groupOf(pkg)
		if l < 0 {
			bad = append(bad, pkg+" is in no layer: place it in steps/layers_test.go's layers")
			continue
		}
		for _, d := range deps {
			dg, dl := groupOf(d)
			switch {
			case dl < 0:
				bad = append(bad, pkg+" imports "+d+", which is in no layer")
			case dl > l:
				bad = append(bad, pkg+" imports "+d+": an arrow back up (layer "+g+" below "+dg+")")
			case dl == l && dg != g:
				bad = append(bad, pkg+" imports "+d+": "+g+" and "+dg+" stand side by side")
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// moduleImports reads every package of the module at root (non-test files, this platform's
// build constraints): package path → the module packages it imports, both without the module
// prefix.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if n := d.Name(); path != root && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		var deps []string
		for _, imp := range p.Imports {
			if d, ok := strings.CutPrefix(imp, module); ok {
				deps = append(deps, d)
			}
		}
		out[filepath.ToSlash(rel)] = deps
		return nil
	})
	if err != nil {
		t.Fatalf("read the module's packages: %v", err)
	}
	return out
}

// order spells layers lowest first: "schema < engine < … < steps/measure, steps/telemetry < …".
func order() string {
	var l []string
	for _, g := range layers {
		l = append(l, strings.Join(g, ", "))
	}
	return strings.Join(l, " < ")
}

// TestImportsRunDown: no package imports one of a higher layer or a group beside its own.
func TestImportsRunDown(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "go.mod")); err != nil {
		t.Fatalf("the module root is not the parent folder: %v", err)
	}
	imports := moduleImports(t, "..")
	for _, want := range []string{"engine", "steps", "steps/measure/openai", "steps/run-shape", "cmd/perfdag"} {
		if _, ok := imports[want]; !ok {
			t.Fatalf("the walk found no package %s (found %d): it reads the wrong tree", want, len(imports))
		}
	}
	if bad := arrowsUp(imports); len(bad) > 0 {
		t.Errorf("%d imports break the layers (%s):\n%s", len(bad), order(), strings.Join(bad, "\n"))
	}
}

// TestArrowsUpFound: the check names an arrow up, an arrow sideways, a kind importing a kind
// and a package in no layer, and passes imports within a group and down.
func TestArrowsUpFound(t *testing.T) {
	got := arrowsUp(map[string][]string{
		"steps/measure/workload":  {"steps/catalog", "steps/measure/tokens", "engine/bounded", "schema"},
		"steps/measure/calibrate": {"steps/sim"},
		"steps/telemetry/dcgm":    {"steps/measure/stats"},
		"steps/render":            {"steps/report", "steps/exec"},
		"steps":                   {"steps/render", "steps/sim"},
		"steps/webui":             {"steps/render", "steps"},
		"steps/newthing":          nil,
		"steps/testkit/laketest":  {"steps/testkit", "steps/lake"},
		"steps/lake/laketest":     {"steps/testkit"},
	})
	want := []string{
		"steps/lake/laketest imports steps/testkit: an arrow back up (layer steps/lake below steps/testkit)",
		"steps/measure/calibrate imports steps/sim: an arrow back up (layer steps/measure below steps/sim)",
		"steps/newthing is in no layer: place it in steps/layers_test.go's layers",
		"steps/render imports steps/exec: steps/render and steps/exec stand side by side",
		"steps/telemetry/dcgm imports steps/measure/stats: steps/telemetry and steps/measure stand side by side",
		"steps/webui imports steps: steps/webui and steps stand side by side",
	}
	if !slices.Equal(got, want) {
		t.Errorf("arrowsUp =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
