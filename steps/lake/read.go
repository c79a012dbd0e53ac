package lake

import (
	"context"
	"fmt"
	"slices"
)

// Read returns a campaign's rows of one table, in the table's order (its primary key, or
// Table.Order), each value normalized to its column's Go type (string, int64, float64, bool,
// or nil for NULL): SQLite and PostgreSQL read back the same way, so two lakes can be compared
// row by row. A table an older perfdag created without some of today's columns reads them as
// NULL — but atlas_v1's load, which its rows' concurrency and extra_json give.
func (l *Lake) Read(ctx context.Context, table, campaignID string) ([][]any, error) {
	t, ok := TableNamed(table)
	if !ok {
		return nil, fmt.Errorf("read %s: no such lake table", table)
	}
	stored, err := l.storedColumns(ctx, l.conn.query, t.Name)
	if err != nil {
		return nil, fmt.Errorf("read %s from %s: %w", table, l.loc, err)
	}
	var rows [][]any
	if len(stored) > 0 && slices.ContainsFunc(t.Columns, func(c Column) bool { _, ok := stored[c.Name]; return !ok }) {
		rows, err = l.readOld(ctx, t, stored, campaignID) // written by an older perfdag, not yet upgraded by a publish
	} else {
		rows, err = l.conn.query(ctx, l.d.selectSQL(t), campaignID)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s from %s: %w", table, l.loc, err)
	}
	for _, r := range rows {
		for i, c := range t.Columns {
			v, err := normalize(c, r[i])
			if err != nil {
				return nil, fmt.Errorf("read %s from %s: %w", table, l.loc, err)
			}
			r[i] = v
		}
	}
	return rows, nil
}

// Count returns how many rows each table holds for a campaign, in table order. A lake no
// campaign was ever published to counts zero everywhere.
func (l *Lake) Count(ctx context.Context, campaignID string) ([]TableCount, error) {
	exists, err := l.conn.query(ctx, l.d.tableExists, MetaTable)
	if err != nil {
		return nil, fmt.Errorf("count rows in %s: %w", l.loc, err)
	}
	if n, _ := normalize(Column{Name: "count", Type: BigInt}, exists[0][0]); n == int64(0) {
		out := make([]TableCount, 0, 5)
		for _, t := range Tables() {
			out = append(out, TableCount{Table: t.Name})
		}
		return out, nil
	}
	var out []TableCount
	for _, t := range Tables() {
		rows, err := l.conn.query(ctx, l.d.countSQL(t), campaignID)
		if err != nil {
			return nil, fmt.Errorf("count %s in %s: %w", t.Name, l.loc, err)
		}
		n, err := normalize(Column{Name: "count", Type: BigInt}, rows[0][0])
		if err != nil {
			return nil, err
		}
		out = append(out, TableCount{Table: t.Name, Rows: int(n.(int64))})
	}
	return out, nil
}
