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
	if len(stored) == 0 {
		return nil, nil // a table this lake never got (history_v1 in a lake older than it)
	}
	var rows [][]any
	if slices.ContainsFunc(t.Columns, func(c Column) bool { _, ok := stored[c.Name]; return !ok }) {
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
		stored, err := l.storedColumns(ctx, l.conn.query, t.Name)
		if err != nil {
			return nil, fmt.Errorf("count %s in %s: %w", t.Name, l.loc, err)
		}
		if len(stored) == 0 {
			out = append(out, TableCount{Table: t.Name}) // a table this lake never got
			continue
		}
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

// Runs lists the campaign ids of a campaign's judged scheduled runs in the lake (history_v1),
// oldest first (campaign ids begin with their UTC start); none when the lake has no history.
func (l *Lake) Runs(ctx context.Context, campaign string) ([]string, error) {
	stored, err := l.storedColumns(ctx, l.conn.query, HistoryTable)
	if err != nil {
		return nil, fmt.Errorf("read %s from %s: %w", HistoryTable, l.loc, err)
	}
	if len(stored) == 0 {
		return nil, nil
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE campaign = %s ORDER BY started, %s", ColCampaignID, HistoryTable, l.d.placeholder(1), ColCampaignID)
	rows, err := l.conn.query(ctx, q, campaign)
	if err != nil {
		return nil, fmt.Errorf("read %s from %s: %w", HistoryTable, l.loc, err)
	}
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		v, err := normalize(Column{Name: ColCampaignID, Type: Text}, r[0])
		if err != nil {
			return nil, err
		}
		ids = append(ids, v.(string))
	}
	return ids, nil
}

// Records returns the row_json of a campaign's rows of one table, in the table's order: the
// whole records, to decode into their schema types.
func (l *Lake) Records(ctx context.Context, table, campaignID string) ([]string, error) {
	t, _ := TableNamed(table)
	rows, err := l.Read(ctx, table, campaignID)
	if err != nil {
		return nil, err
	}
	at := slices.IndexFunc(t.Columns, func(c Column) bool { return c.Name == ColRowJSON })
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		if s, ok := r[at].(string); ok {
			out = append(out, s)
		}
	}
	return out, nil
}
