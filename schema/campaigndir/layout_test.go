package campaigndir

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNamesSpelledOnlyHere enforces the contract: outside this package, no Go code (tests
// included — they assert the layout through this package too) spells a file or folder name of
// the campaign layout in a string that is a path. Prose (help texts, messages: strings with
// spaces) may mention files; paths must come from here, so a rename is a compile error
// instead of a page that silently says "no data".
func TestNamesSpelledOnlyHere(t *testing.T) {
	root := filepath.Join("..", "..")
	withExt, bare := map[string]bool{}, map[string]bool{}
	for _, n := range Names() {
		if strings.Contains(n, ".") && !strings.HasPrefix(n, ".") {
			withExt[n] = true
		} else {
			bare[n] = true
		}
	}
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "testdata" || path == "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		abs, _ := filepath.Abs(path)
		here, _ := filepath.Abs(".")
		if filepath.Dir(abs) == here {
			return nil
		}
		found = append(found, spelled(t, path, withExt, bare)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: spell it through schema/campaigndir", f)
	}
}

// spelled lists the string literals of a file that spell a layout name as a path: a name with
// an extension anywhere as a path element, a bare folder name only as an element of a joined
// path (filepath.Join/path.Join arguments or a literal with a slash).
func spelled(t *testing.T, path string, withExt, bare map[string]bool) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	joined, tags := map[*ast.BasicLit]bool{}, map[*ast.BasicLit]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if field, ok := n.(*ast.Field); ok && field.Tag != nil {
			tags[field.Tag] = true
		}
		if imp, ok := n.(*ast.ImportSpec); ok {
			tags[imp.Path] = true // import paths name packages, not files
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Join" {
			if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "filepath" || pkg.Name == "path") {
				for _, a := range call.Args {
					if lit, ok := a.(*ast.BasicLit); ok {
						joined[lit] = true
					}
				}
			}
		}
		return true
	})
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || tags[lit] {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil || strings.ContainsAny(s, " \n\t") {
			return true
		}
		for _, el := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' }) {
			if withExt[el] || (bare[el] && (joined[lit] || strings.Contains(s, "/"))) {
				out = append(out, fset.Position(lit.Pos()).String()+": "+strconv.Quote(s))
				break
			}
		}
		return true
	})
	return out
}
