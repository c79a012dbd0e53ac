// Package fingerprint hashes everything a node's result depends on — kind, kind version,
// resolved parameters, the campaign inputs it reads, its cell and point, and its upstream
// nodes' output digests — and explains in words why two fingerprints differ.
package fingerprint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/perfdag/perfdag/engine/redact"
)

// Doc is the hashed document; it is stored beside the hash so a re-run can be explained
// ("parameter concurrency changed"). It never contains a secret: kinds return only the names
// of environment variables, never their values.
type Doc struct {
	Kind     string            `json:"kind"`
	Version  string            `json:"version"`
	Node     string            `json:"node"`
	Params   json.RawMessage   `json:"params"`
	Inputs   json.RawMessage   `json:"inputs"`
	Upstream map[string]string `json:"upstream"` // data dependency → its output digest
	// Gates holds, for kinds that read verdicts, the campaign's gate definitions and the
	// verdicts of every node the kind reads from; empty for every other kind.
	Gates json.RawMessage `json:"gates,omitempty"`
}

// Canonical encodes v deterministically (map keys sorted, struct fields in order), with every
// string redacted: these documents are stored in the journal, and an endpoint URL may carry a
// password (which, changing, must not re-run anything either).
func Canonical(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("null"), nil
	}
	b, err := encode(v)
	if err != nil || !redact.Suspect(b) {
		return b, err
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers round-trip as written
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("redact fingerprint input: %w", err)
	}
	changed := false
	doc = redactStrings(doc, &changed)
	if !changed {
		return b, nil // keep the encoding (and so the fingerprint) of a document with no secret
	}
	return encode(doc)
}

func encode(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode fingerprint input: %w", err)
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

// redactStrings redacts every string (and map key) of a decoded JSON document, noting
// whether anything changed.
func redactStrings(v any, changed *bool) any {
	str := func(s string) string {
		r := redact.String(s)
		*changed = *changed || r != s
		return r
	}
	switch x := v.(type) {
	case string:
		return str(x)
	case []any:
		for i := range x {
			x[i] = redactStrings(x[i], changed)
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[str(k)] = redactStrings(val, changed)
		}
		return out
	}
	return v
}

// Sum is the fingerprint: the SHA-256 of the document's fields, each length-prefixed so no
// two documents share a hash by shifting bytes between fields.
func (d Doc) Sum() string {
	h := sha256.New()
	field := func(b []byte) {
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
	}
	field([]byte(d.Kind))
	field([]byte(d.Version))
	field([]byte(d.Node))
	field(d.Params)
	field(d.Inputs)
	keys := make([]string, 0, len(d.Upstream))
	for k := range d.Upstream {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		field([]byte(k))
		field([]byte(d.Upstream[k]))
	}
	if len(d.Gates) > 0 {
		field([]byte("gates"))
		field(d.Gates)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Digest hashes a node's outputs: its result and every output file's digest.
func Digest(result json.RawMessage, outputs map[string]string) string {
	h := sha256.New()
	h.Write(result)
	keys := make([]string, 0, len(outputs))
	for k := range outputs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "\n%s=%s", k, outputs[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Explain lists, in words, what changed from old to cur (at most limit reasons).
func Explain(old, cur Doc, limit int) []string {
	var out []string
	if old.Kind != cur.Kind {
		out = append(out, fmt.Sprintf("kind changed from %s to %s", old.Kind, cur.Kind))
	}
	if old.Version != cur.Version {
		out = append(out, fmt.Sprintf("kind %s version changed from %s to %s", cur.Kind, old.Version, cur.Version))
	}
	for _, p := range changed(old.Params, cur.Params) {
		out = append(out, "parameter "+p+" changed")
	}
	for _, p := range changed(old.Inputs, cur.Inputs) {
		out = append(out, "input "+p+" changed")
	}
	var ups []string
	for n := range cur.Upstream {
		ups = append(ups, n)
	}
	sort.Strings(ups)
	for _, n := range ups {
		if o, ok := old.Upstream[n]; !ok {
			out = append(out, "new dependency "+n)
		} else if o != cur.Upstream[n] {
			out = append(out, "upstream "+n+" re-ran")
		}
	}
	for n := range old.Upstream {
		if _, ok := cur.Upstream[n]; !ok {
			out = append(out, "dependency "+n+" removed")
		}
	}
	if !bytes.Equal(old.Gates, cur.Gates) {
		out = append(out, "gate definitions or the verdicts it reads changed")
	}
	if len(out) == 0 && old.Sum() != cur.Sum() {
		out = append(out, "definition changed")
	}
	if limit > 0 && len(out) > limit {
		out = append(out[:limit], fmt.Sprintf("and %d more", len(out)-limit))
	}
	return out
}

// changed lists the dotted paths whose values differ between two JSON documents.
func changed(a, b json.RawMessage) []string {
	var va, vb any
	_ = json.Unmarshal(a, &va)
	_ = json.Unmarshal(b, &vb)
	var out []string
	diff("", va, vb, &out)
	sort.Strings(out)
	return out
}

func diff(path string, a, b any, out *[]string) {
	ma, oka := a.(map[string]any)
	mb, okb := b.(map[string]any)
	if oka && okb {
		keys := map[string]bool{}
		for k := range ma {
			keys[k] = true
		}
		for k := range mb {
			keys[k] = true
		}
		for k := range keys {
			diff(strings.TrimPrefix(path+"."+k, "."), ma[k], mb[k], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		if path == "" {
			path = "(all)"
		}
		*out = append(*out, path)
	}
}
