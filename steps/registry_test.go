package steps

import (
	"bytes"
	"encoding/json"
	"flag"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite schema/campaign.schema.json from the Go types and the registry")

// The checked-in schema is what editors read; it must be exactly what the types and the
// registered kinds generate.
func TestCheckedInSchemaMatchesTypes(t *testing.T) {
	got, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "schema", "campaign.schema.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test ./steps -run TestCheckedInSchemaMatchesTypes -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("schema/campaign.schema.json drifted from the Go types or the registry: run `make schema`")
	}
}

// Every list of kind names comes from the registry: the JSON Schema's enum here, `perfdag
// kinds` and docs/pipeline.md's table (cmd/perfdag's TestDocsGeneratedSections); and every
// kind is found as a folder named after it.
func TestKindsComeFromTheRegistry(t *testing.T) {
	r, err := Registry()
	if err != nil {
		t.Fatal(err)
	}
	b, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			Pipeline struct {
				Items struct {
					Properties struct {
						Kind struct {
							Enum []string `json:"enum"`
						} `json:"kind"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"pipeline"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if got := s.Properties.Pipeline.Items.Properties.Kind.Enum; !slices.Equal(got, r.Names()) {
		t.Errorf("schema enum %v, registry %v", got, r.Names())
	}
	for _, name := range r.Names() {
		if st, err := os.Stat(name); err != nil || !st.IsDir() {
			t.Errorf("kind %s has no folder steps/%s", name, name)
		}
	}
	if len(r.Names()) != 14 {
		t.Errorf("%d kinds: the eleven mission kinds, import, exec and sweep are %d", len(r.Names()), 14)
	}
}

// Kinds never import kinds: what one step offers another travels in its result, read through
// the campaign directory contract's interfaces.
func TestKindsDoNotImportKinds(t *testing.T) {
	r, err := Registry()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, n := range r.Names() {
		kinds["github.com/perfdag/perfdag/steps/"+n] = true
	}
	for _, n := range r.Names() {
		files, _ := filepath.Glob(filepath.Join(n, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range parsed.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); kinds[path] {
					t.Errorf("%s imports kind %s", f, path)
				}
			}
		}
	}
}
