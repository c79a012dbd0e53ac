package run

import (
	"encoding/json"
	"maps"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/schema"
)

// legacyIDs maps the ids a directory's records were written under to the ids their nodes
// have today: a point that perfdag keyed by its concurrency before points were keyed by load
// (an open-loop point of the older request_rate spelling, once run-shape[c/c8], now
// run-shape[c/r20-cap8]). Only ids with a record under the old id and none under the new one
// are mapped.
func (r *Runner) legacyIDs(records map[string]*checkpoint.Record) map[string]string {
	var out map[string]string
	for _, n := range r.plan.Snapshot() {
		if n.Legacy == "" || records[n.ID] != nil || records[n.Legacy] == nil {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[n.Legacy] = n.ID
	}
	return out
}

// migrate reads a directory written before points were keyed by load as one written today:
// each record of a renamed node under its new id, and every record that names a renamed node
// (its own id, its upstream digests, the verdicts it holds or read) with those names as they
// are today — its fingerprint recomputed from its stored document with only the names
// changed, and only when that document still hashes to the fingerprint recorded, so nothing
// the old run did not vouch for passes as current. Outputs, digests and results are kept as
// written (the files stay where the old run put them). It returns the records that read
// differently, for the store to overlay; the journal itself is never rewritten.
func (r *Runner) migrate(records map[string]*checkpoint.Record) map[string]*checkpoint.Record {
	rename := r.legacyIDs(records)
	if len(rename) == 0 {
		return nil
	}
	loads := map[string]schema.Load{}
	for _, id := range rename {
		if n, ok := r.plan.Node(id); ok {
			loads[id] = n.Load
		}
	}
	r.mu.Lock()
	if r.legacy == nil {
		r.legacy = map[string]string{}
	}
	for old, to := range rename {
		r.legacy[to] = old
	}
	r.mu.Unlock()
	out := map[string]*checkpoint.Record{}
	for id, rec := range records {
		m, changed := migrateRecord(rec, rename, loads)
		if !changed {
			continue
		}
		if to, ok := rename[id]; ok {
			id = to
		}
		out[id] = m
	}
	for id, rec := range out {
		records[id] = rec
	}
	return out
}

// migrateRecord is rec with renamed node ids (a copy; changed false when nothing is renamed).
func migrateRecord(rec *checkpoint.Record, rename map[string]string, loads map[string]schema.Load) (*checkpoint.Record, bool) {
	m := *rec
	changed := false
	if to, ok := rename[rec.Node]; ok {
		m.Node, changed = to, true
	}
	if gs, ok := renameVerdicts(rec.Gates, rename, loads); ok {
		m.Gates, changed = gs, true
	}
	doc := rec.FingerprintDoc()
	trusted := rec.Fingerprint != "" && doc.Sum() == rec.Fingerprint
	docChanged := false
	if to, ok := rename[doc.Node]; ok {
		doc.Node, docChanged = to, true
	}
	if ups := doc.Upstream; len(ups) > 0 {
		renamed := maps.Clone(ups)
		for old, to := range rename {
			if d, ok := renamed[old]; ok {
				delete(renamed, old)
				renamed[to] = d
				docChanged = true
			}
		}
		doc.Upstream = renamed
	}
	if len(doc.Gates) > 0 {
		if g, ok := renameGatesDoc(doc.Gates, rename, loads); ok {
			doc.Gates, docChanged = g, true
		}
	}
	if docChanged && trusted {
		m.SetDoc(doc)
		changed = true
	}
	return &m, changed
}

// renameVerdicts renames the nodes of verdicts on renamed nodes and gives them their load, as
// a verdict on such a node is written today; ok is false when none is renamed.
func renameVerdicts(vs []gate.Verdict, rename map[string]string, loads map[string]schema.Load) ([]gate.Verdict, bool) {
	var out []gate.Verdict
	for i, v := range vs {
		to, ok := rename[v.Node]
		if !ok {
			continue
		}
		if out == nil {
			out = append([]gate.Verdict(nil), vs...)
		}
		out[i].Node = to
		if l := loads[to]; l.IsRate() {
			out[i].Load = l.Key()
		}
	}
	return out, out != nil
}

// renameGatesDoc renames the verdicts inside a verdict reader's gates document (gatesDoc),
// encoded as gatesDoc encodes it.
func renameGatesDoc(raw json.RawMessage, rename map[string]string, loads map[string]schema.Load) (json.RawMessage, bool) {
	var d struct {
		Definitions []gateDef      `json:"definitions"`
		Verdicts    []gate.Verdict `json:"verdicts"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, false
	}
	vs, ok := renameVerdicts(d.Verdicts, rename, loads)
	if !ok {
		return nil, false
	}
	b, err := gatesDocOf(d.Definitions, vs)
	if err != nil {
		return nil, false
	}
	return b, true
}
