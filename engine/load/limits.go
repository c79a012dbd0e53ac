package load

import (
	"io"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/scanner"
	"github.com/goccy/go-yaml/token"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/engine/diag"
)

// Limits on a campaign file. A campaign is a few kilobytes; these bounds are orders of
// magnitude above any real file and keep a hostile one (a 50 MB file, 100k-deep brackets,
// billion-laughs aliases) from costing more than a fraction of a second. goccy's parser is
// superlinear in nesting depth, so size and depth are checked before parsing, depth as the
// file is lexed.
const (
	MaxFileBytes     = 256 << 10 // campaign file size
	MaxDepth         = 100       // nesting: flow brackets plus block indentation levels, aliases expanded
	MaxAliases       = 10_000    // alias dereferences in the document with every alias expanded
	MaxExpandedBytes = 4 << 20   // scalar bytes (+1 per node) of the document with every alias expanded
)

// Classes of the limit diagnostics (diag.Diagnostic.Class).
const (
	ClassFileSize   = "limit_file_size"
	ClassDepth      = "limit_depth"
	ClassAliases    = "limit_aliases"
	ClassExpansion  = "limit_alias_bytes"
	ClassAliasCycle = "alias_cycle"
)

// checkSize refuses a file past MaxFileBytes, positioned at the first byte past the limit.
func checkSize(name string, src []byte, diags *diag.List) bool {
	if len(src) <= MaxFileBytes {
		return true
	}
	line, col := 1, 1
	for _, b := range src[:MaxFileBytes] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	diags.AddClass(ClassFileSize, name, line, col, "a campaign is a few kilobytes: move prompts into a dataset file, and split sweeps into several campaigns",
		"the campaign file is larger than the %s limit (%d bytes); it passes the limit here", bounded.Size(MaxFileBytes), MaxFileBytes)
	return false
}

// tokenize lexes src and refuses nesting deeper than MaxDepth as the tokens come, before
// the parser (superlinear in depth) sees them and before a deep file is lexed to its end:
// flow brackets are counted exactly, block nesting by its stack of indentation columns.
func tokenize(name, src string, diags *diag.List) (token.Tokens, bool) {
	var s scanner.Scanner
	s.Init(src)
	var toks token.Tokens
	var n nesting
	for {
		sub, err := s.Scan()
		if err == io.EOF {
			return toks, true
		}
		for _, tk := range sub {
			toks.Add(tk)
			if n.deeper(tk) {
				at := tk
				if tk.Type == token.MappingValueType && tk.Prev != nil {
					at = tk.Prev // point at the key, not its colon
				}
				line, c := position(at)
				diags.AddClass(ClassDepth, name, line, c, "flatten the structure: campaign files nest a handful of levels",
					"nesting deeper than the limit of %d levels", MaxDepth)
				return nil, false
			}
		}
	}
}

// nesting tracks the depth of the tokens seen so far.
type nesting struct {
	flow int   // open [ and {
	cols []int // block indentation columns, innermost last
}

// deeper takes the next token and reports whether the depth is now past MaxDepth.
func (n *nesting) deeper(tk *token.Token) bool {
	switch tk.Type {
	case token.SequenceStartType, token.MappingStartType:
		n.flow++
	case token.SequenceEndType, token.MappingEndType:
		n.flow = max(0, n.flow-1)
	case token.SequenceEntryType, token.MappingValueType:
		if n.flow > 0 || tk.Position == nil {
			return false
		}
		col := tk.Position.Column
		if tk.Type == token.MappingValueType && tk.Prev != nil && tk.Prev.Position != nil {
			col = tk.Prev.Position.Column // the key's column is the mapping's indentation
		}
		for len(n.cols) > 0 && n.cols[len(n.cols)-1] > col {
			n.cols = n.cols[:len(n.cols)-1]
		}
		if len(n.cols) == 0 || n.cols[len(n.cols)-1] < col {
			n.cols = append(n.cols, col)
		}
	default:
		return false
	}
	return n.flow+len(n.cols) > MaxDepth
}

// expansion is the size of a subtree with its aliases expanded.
type expansion struct{ bytes, aliases, depth int }

// aliasPass resolves every alias to the anchor defined before it (in document order, so a
// redefined anchor is honoured) and bounds the document's size with every alias expanded, so
// billion-laughs nesting and alias cycles are refused before anything is decoded.
type aliasPass struct {
	d       *decoder
	anchors map[string]ast.Node    // name → its current definition's value
	memo    map[ast.Node]expansion // anchor value → its expanded size
	active  map[ast.Node]bool      // anchor values being walked: an alias to one is a cycle
	total   expansion              // running totals over the whole document
	failed  bool
}

func (d *decoder) resolveAliases(root ast.Node) bool {
	p := &aliasPass{d: d, anchors: map[string]ast.Node{}, memo: map[ast.Node]expansion{}, active: map[ast.Node]bool{}}
	p.walk(root, 0)
	return !p.failed
}

func (p *aliasPass) fail(n ast.Node, class, hint, format string, args ...any) expansion {
	p.failed = true
	line, col := pos(n)
	p.d.diags.AddClass(class, p.d.file, line, col, hint, format, args...)
	return expansion{}
}

// walk returns the expanded size of n at nesting level depth.
func (p *aliasPass) walk(n ast.Node, depth int) expansion {
	if n == nil || p.failed {
		return expansion{}
	}
	switch v := n.(type) {
	case *ast.AnchorNode:
		name := ""
		if tk := v.Name.GetToken(); tk != nil {
			name = tk.Value
		}
		p.active[v.Value] = true
		p.anchors[name] = v.Value
		e := p.walk(v.Value, depth)
		delete(p.active, v.Value)
		p.memo[v.Value] = e
		return e
	case *ast.AliasNode:
		name := v.Value.GetToken().Value
		target, ok := p.anchors[name]
		switch {
		case !ok:
			return p.fail(v, "", "define &"+name+" before this alias", "alias *%s refers to no anchor defined before it", name)
		case p.active[target]:
			return p.fail(v, ClassAliasCycle, "an alias cannot point into its own anchor", "alias *%s is inside its own anchor &%s: the value would be infinite", name, name)
		}
		p.d.aliases[v] = target
		e := p.memo[target]
		e.aliases++
		p.total.aliases += e.aliases
		p.total.bytes += e.bytes
		switch {
		case depth+e.depth > MaxDepth:
			return p.fail(v, ClassDepth, "flatten the aliased structure", "alias *%s nests the document deeper than the limit of %d levels", name, MaxDepth)
		case p.total.aliases > MaxAliases:
			return p.fail(v, ClassAliases, "aliases that expand into aliases multiply: share blocks with one level of <<: *name", "alias *%s takes the document past the limit of %d expanded aliases", name, MaxAliases)
		case p.total.bytes > MaxExpandedBytes:
			return p.fail(v, ClassExpansion, "aliases that expand into aliases multiply: share blocks with one level of <<: *name", "alias *%s expands the document past the %s limit on expanded size", name, bounded.Size(MaxExpandedBytes))
		}
		return e
	case *ast.TagNode:
		return p.walk(v.Value, depth)
	case *ast.LiteralNode:
		return p.walk(v.Value, depth)
	case *ast.MappingNode: // its pairs sit at its own level
		p.total.bytes++
		e := expansion{bytes: 1}
		for _, kv := range v.Values {
			c := p.walk(kv, depth)
			e = expansion{bytes: e.bytes + c.bytes, aliases: e.aliases + c.aliases, depth: max(e.depth, c.depth)}
		}
		return e
	case *ast.MappingValueNode:
		p.total.bytes++
		return nest(p.walk(v.Key, depth+1), p.walk(v.Value, depth+1))
	case *ast.SequenceNode:
		p.total.bytes++
		items := make([]expansion, len(v.Values))
		for i, item := range v.Values {
			items[i] = p.walk(item, depth+1)
		}
		return nest(items...)
	}
	size := 1
	if tk := n.GetToken(); tk != nil {
		size += len(tk.Value)
	}
	p.total.bytes += size
	return expansion{bytes: size}
}

// nest is a collection node holding children one level down.
func nest(children ...expansion) expansion {
	e := expansion{bytes: 1, depth: 1}
	for _, c := range children {
		e.bytes += c.bytes
		e.aliases += c.aliases
		e.depth = max(e.depth, c.depth+1)
	}
	return e
}

// CheckPlain refuses, before any parse, a small YAML file that needs no anchors (a bundle
// manifest) if it nests past MaxDepth or uses an anchor or alias: lexing is linear in its
// bytes, so a hostile file costs no more than reading it, and nothing can expand.
func CheckPlain(name string, src []byte) error {
	var diags diag.List
	toks, ok := tokenize(name, string(src), &diags)
	if !ok {
		return diags.Err()
	}
	for _, tk := range toks {
		if tk.Type == token.AnchorType || tk.Type == token.AliasType {
			line, col := position(tk)
			diags.AddClass(ClassAliases, name, line, col, "write each value out",
				"an anchor or alias (%s): this file takes none; write each value out", tk.Value)
			return diags.Err()
		}
	}
	return nil
}
