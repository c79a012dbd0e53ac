package load

import (
	"regexp"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// ${VAR}, ${VAR:-default} and $$ (a literal dollar).
var varRef = regexp.MustCompile(`\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// interpolate substitutes environment variables in every string value of the file (never in
// keys), before decoding, so positions stay those of the source. lookup is os.LookupEnv.
func (d *decoder) interpolate(n ast.Node, lookup func(string) (string, bool)) {
	switch v := n.(type) {
	case *ast.DocumentNode:
		d.interpolate(v.Body, lookup)
	case *ast.MappingNode:
		for _, kv := range v.Values {
			d.interpolate(kv.Value, lookup)
		}
	case *ast.MappingValueNode:
		d.interpolate(v.Value, lookup)
	case *ast.SequenceNode:
		for _, item := range v.Values {
			d.interpolate(item, lookup)
		}
	case *ast.TagNode:
		d.interpolate(v.Value, lookup)
	case *ast.AnchorNode:
		d.interpolate(v.Value, lookup)
	case *ast.LiteralNode:
		d.interpolate(v.Value, lookup)
	case *ast.StringNode:
		if strings.Contains(v.Value, "$") {
			v.Value = d.expand(v, v.Value, lookup)
		}
	}
}

func (d *decoder) expand(n ast.Node, s string, lookup func(string) (string, bool)) string {
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		sub := varRef.FindStringSubmatch(m)
		name, hasDefault, def := sub[1], sub[2] != "", sub[3]
		if val, ok := lookup(name); ok && val != "" {
			return val
		}
		if hasDefault {
			return def
		}
		d.badNode[n] = true
		d.errorf(n, "export "+name+"=... before running, or write ${"+name+":-default}",
			"environment variable %s is not set", name)
		return m
	})
}
