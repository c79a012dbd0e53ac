package lake

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/schema"
)

// A lake written before points were keyed by load keys atlas_v1 by (campaign_id, cell_id,
// concurrency, input_tokens_key): two rate points of one cell sharing an in-flight cap would
// collide there. The first publish of a perfdag with load keys rebuilds the table, inside its
// transaction, under today's key (campaign_id, cell_id, load, input_tokens_key): the columns
// load and request_rate are added, every old row's load is read from its concurrency and
// extra_json's request_rate (an open-loop row of the older request_rate spelling was keyed by
// its cap), and the rows move to a table with the new key, which takes the old one's name.
// Until then, Read reads such a table as it is and computes the load of each row the same way.

// rekeyedSuffix names the table rows move into while atlas_v1 is rebuilt.
const rekeyedSuffix = "_rekey"

// needsRekey reports whether the stored atlas table predates load keys.
func needsRekey(t Table, stored map[string]bool) bool {
	_, has := stored[ColLoad]
	return t.Name == AtlasTable && !has
}

// rekeyAtlas rebuilds an atlas table written before load keys under t's columns and key.
func (l *Lake) rekeyAtlas(ctx context.Context, tx txn, t Table, stored map[string]bool, sig string) error {
	for _, c := range t.Columns {
		if _, ok := stored[c.Name]; ok {
			continue
		}
		if !c.Null && c.Name != ColLoad && c.Name != ColRate {
			return fmt.Errorf("table %s in this lake predates load keys and lacks column %s, which is NOT NULL: publish to a new lake, or migrate the table to the DDL of `steps/lake` Schema()", t.Name, c.Name)
		}
		typ := c.Type
		if _, err := tx.exec(ctx, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", t.Name, c.Name, typ)); err != nil {
			return fmt.Errorf("add column %s to %s: %w", c.Name, t.Name, err)
		}
		stored[c.Name] = false
	}
	rows, err := tx.query(ctx, fmt.Sprintf("SELECT %s, cell_id, concurrency, %s, extra_json FROM %s", ColCampaignID, ColInputKey, t.Name))
	if err != nil {
		return fmt.Errorf("read the keys of %s: %w", t.Name, err)
	}
	update := fmt.Sprintf("UPDATE %s SET %s = %s, %s = %s WHERE %s = %s AND cell_id = %s AND concurrency = %s AND %s = %s",
		t.Name, ColLoad, l.d.placeholder(1), ColRate, l.d.placeholder(2), ColCampaignID, l.d.placeholder(3),
		l.d.placeholder(4), l.d.placeholder(5), ColInputKey, l.d.placeholder(6))
	for _, r := range rows {
		id, _ := normalize(Column{Type: Text}, r[0])
		cell, _ := normalize(Column{Type: Text}, r[1])
		conc, _ := normalize(Column{Type: BigInt}, r[2])
		key, _ := normalize(Column{Type: Double}, r[3])
		extra, _ := normalize(Column{Type: Text}, r[4])
		n, _ := conc.(int64)
		ld := legacyLoad(int(n), extra)
		if _, err := tx.exec(ctx, update, ld.Key(), ld.Rate, id, cell, conc, key); err != nil {
			return fmt.Errorf("key row %v/%v of %s by load: %w", cell, ld.Key(), t.Name, err)
		}
	}
	next := t
	next.Name = t.Name + rekeyedSuffix
	cols := strings.Join(t.columnNames(), ", ")
	for _, q := range []string{
		next.CreateSQL(),
		fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", next.Name, cols, cols, t.Name),
		"DROP TABLE " + t.Name,
		fmt.Sprintf("ALTER TABLE %s RENAME TO %s", next.Name, t.Name),
	} {
		if _, err := tx.exec(ctx, q); err != nil {
			return fmt.Errorf("rebuild %s keyed by load: %w", t.Name, err)
		}
	}
	q := fmt.Sprintf("UPDATE %s SET columns_sha256 = %s WHERE table_name = %s", MetaTable, l.d.placeholder(1), l.d.placeholder(2))
	if _, err := tx.exec(ctx, q, sig, t.Name); err != nil {
		return fmt.Errorf("record the columns of %s in %s: %w", t.Name, MetaTable, err)
	}
	return nil
}

// legacyLoad is the load of an atlas row published before load keys: its concurrency, capped
// at which the rate its extra map names when the cell ran open loop.
func legacyLoad(concurrency int, extraJSON any) schema.Load {
	var extra struct {
		RequestRate float64 `json:"request_rate"`
	}
	if s, ok := extraJSON.(string); ok {
		_ = json.Unmarshal([]byte(s), &extra)
	}
	return schema.LoadOf(schema.Load{}, concurrency, extra.RequestRate)
}

// storedColumns reads the columns a stored table has: name → NOT NULL.
func (l *Lake) storedColumns(ctx context.Context, q func(context.Context, string, ...any) ([][]any, error), table string) (map[string]bool, error) {
	rows, err := q(ctx, l.d.columns, table)
	if err != nil {
		return nil, fmt.Errorf("read the columns of %s: %w", table, err)
	}
	stored := map[string]bool{}
	for _, r := range rows {
		n, _ := normalize(Column{Type: Text}, r[0])
		name, _ := n.(string)
		v, _ := normalize(Column{Type: BigInt}, r[1])
		nn, _ := v.(int64)
		stored[name] = nn != 0
	}
	return stored, nil
}

// readOld reads a campaign's rows of a table that lacks some of t's columns (an atlas table
// written before load keys, not yet rebuilt by a publish): the missing columns read NULL, but
// load, which each row's concurrency and extra_json give.
func (l *Lake) readOld(ctx context.Context, t Table, stored map[string]bool, campaignID string) ([][]any, error) {
	var cols []string
	for _, c := range t.Columns {
		if _, ok := stored[c.Name]; ok {
			cols = append(cols, c.Name)
		}
	}
	var order []string
	for _, o := range t.order() {
		if slices.ContainsFunc(t.Columns, func(c Column) bool { _, ok := stored[c.Name]; return !ok && strings.Contains(o, c.Name) }) {
			continue
		}
		order = append(order, o)
	}
	got, err := l.conn.query(ctx, l.d.selectColumnsSQL(t, cols, order), campaignID)
	if err != nil {
		return nil, err
	}
	out := make([][]any, 0, len(got))
	for _, g := range got {
		row := make([]any, len(t.Columns))
		at := map[string]any{}
		for i, name := range cols {
			at[name] = g[i]
		}
		for i, c := range t.Columns {
			row[i] = at[c.Name]
		}
		if _, ok := stored[ColLoad]; !ok && t.Name == AtlasTable {
			n, _ := normalize(Column{Type: BigInt}, at["concurrency"])
			conc, _ := n.(int64)
			ld := legacyLoad(int(conc), at["extra_json"])
			for i, c := range t.Columns {
				switch c.Name {
				case ColLoad:
					row[i] = ld.Key()
				case ColRate:
					row[i] = ld.Rate
				}
			}
		}
		out = append(out, row)
	}
	return out, nil
}
