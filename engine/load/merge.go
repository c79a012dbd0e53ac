package load

import (
	"errors"
	"math"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// pairs returns a mapping's key/value pairs with YAML merge keys applied: `<<: *base` (or a
// list of aliases) contributes the base's pairs for every key the mapping does not set
// itself, earlier bases winning over later ones. Merged values keep the positions of the
// block they were written in, so an error inside a shared endpoint points there.
func (d *decoder) pairs(n ast.Node, path string) ([]*ast.MappingValueNode, bool) {
	return d.mergedPairs(n, path, 0)
}

func (d *decoder) mergedPairs(n ast.Node, path string, depth int) ([]*ast.MappingValueNode, bool) {
	raw, ok := mappingPairs(n)
	if !ok {
		return nil, false
	}
	var own, merged []*ast.MappingValueNode
	for _, kv := range raw {
		if _, isMerge := kv.Key.(*ast.MergeKeyNode); !isMerge {
			own = append(own, kv)
			continue
		}
		merged = append(merged, d.mergeSources(kv.Value, path, depth)...)
	}
	if len(merged) == 0 {
		return own, true
	}
	have := make(map[string]bool, len(own)+len(merged))
	for _, kv := range own {
		have[keyString(kv.Key)] = true
	}
	out := own
	for _, kv := range merged {
		if k := keyString(kv.Key); !have[k] {
			have[k] = true
			out = append(out, kv)
		}
	}
	return out, true
}

// mergeSources are the pairs a `<<:` value contributes: one mapping, or a list of them.
func (d *decoder) mergeSources(v ast.Node, path string, depth int) []*ast.MappingValueNode {
	if depth >= MaxDepth {
		d.errorf(v, "", "%s: merge keys nest deeper than the limit of %d", label(path), MaxDepth)
		return nil
	}
	u := d.unwrap(v)
	if seq, ok := u.(*ast.SequenceNode); ok {
		var out []*ast.MappingValueNode
		for _, item := range seq.Values {
			out = append(out, d.mergeSource(item, path, depth)...)
		}
		return out
	}
	return d.mergeSource(v, path, depth)
}

func (d *decoder) mergeSource(v ast.Node, path string, depth int) []*ast.MappingValueNode {
	pairs, ok := d.mergedPairs(d.unwrap(v), path, depth+1)
	if !ok {
		d.bad[path] = true
		d.errorf(v, "write <<: *name, where &name anchors a mapping", "%s: merge key <<: want a mapping (an alias to one, or a list of them), got %s", label(path), describe(d.unwrap(v)))
		return nil
	}
	return pairs
}

// value decodes a free-form value (extra, extra_body, exec results) into plain Go values —
// map[string]any, []any, scalars — resolving aliases and merge keys the same way as typed
// fields. The alias pass has bounded the expanded size, so this cannot blow up. Numbers JSON
// cannot carry (.nan, .inf) are refused here, where the position is known, rather than by the
// first json.Marshal of a request body.
func (d *decoder) value(n ast.Node, path string) any {
	n = d.unwrap(n)
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return nil
	case *ast.MappingNode, *ast.MappingValueNode:
		pairs, _ := d.pairs(v, path)
		m := make(map[string]any, len(pairs))
		for _, kv := range pairs {
			key := keyString(kv.Key)
			child := join(path, key)
			d.keys[child] = kv.Key
			if _, dup := m[key]; dup {
				d.errorf(kv.Key, "remove one of the two", "%s: key %q appears twice", label(path), key)
				continue
			}
			d.nodes[child] = d.unwrap(kv.Value)
			m[key] = d.value(kv.Value, child)
		}
		return m
	case *ast.SequenceNode:
		out := make([]any, len(v.Values))
		for i, item := range v.Values {
			out[i] = d.value(item, indexPath(path, i))
		}
		return out
	case *ast.InfinityNode, *ast.NanNode:
		d.bad[path] = true
		d.errorf(n, "write a finite number", "%s: %s is not a finite number (JSON cannot carry it)", label(path), describe(n))
		return nil
	case *ast.FloatNode:
		if math.IsInf(v.Value, 0) || math.IsNaN(v.Value) {
			d.bad[path] = true
			d.errorf(n, "write a finite number", "%s: %s is not a finite number (JSON cannot carry it)", label(path), describe(n))
			return nil
		}
	}
	var out any
	if err := yaml.NodeToValue(n, &out); err != nil {
		msg := err.Error()
		var yerr yaml.Error
		if errors.As(err, &yerr) {
			msg = yerr.GetMessage()
		}
		d.bad[path] = true
		d.errorf(n, "", "%s: %s", label(path), firstLine(msg))
		return nil
	}
	return out
}
