package lake

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// Lake is an open lake: an SQLite file or a PostgreSQL database.
type Lake struct {
	loc  Location
	conn conn
	d    dialect
}

// Open parses a lake URL (relative sqlite paths resolve against baseDir) and connects.
// Tables are created by the first publish, inside its transaction.
func Open(ctx context.Context, rawURL, baseDir string) (*Lake, error) {
	loc, err := ParseURL(rawURL, baseDir)
	if err != nil {
		return nil, err
	}
	var c conn
	var d dialect
	switch loc.Driver {
	case DriverSQLite:
		c, err = openSQLite(ctx, loc.Path)
		d = sqliteDialect
	default:
		c, err = openPostgres(ctx, loc)
		d = postgresDialect
	}
	if err != nil {
		return nil, fmt.Errorf("open lake %s: %w", loc, err)
	}
	return &Lake{loc: loc, conn: c, d: d}, nil
}

// Location is where the lake is (print it: it carries no password).
func (l *Lake) Location() Location { return l.loc }

// Close releases the connection.
func (l *Lake) Close(ctx context.Context) error { return l.conn.close(ctx) }

// Publication is everything one campaign puts into the lake.
type Publication struct {
	CampaignID  string             // the run (<UTC-ts>-<slug>): the key every table's rows carry
	Campaign    schema.CampaignRow // the campaign_v1 row
	Champion    string             // champion arm, "" when none
	PublishedAt time.Time
	Atlas       RowSource // atlas_v1 rows, streamed
	TPM         []schema.TPMRow
	Cost        []schema.CostRow
	Roofline    []schema.RooflineRow
	History     *schema.HistoryRow // the history_v1 row of a judged scheduled run, nil otherwise
}

// RowSource streams atlas rows to fn (the pointer may be reused between calls), so an atlas of
// any size is published in bounded memory.
type RowSource func(fn func(*schema.AtlasRow) error) error

// Rows makes a RowSource of a slice.
func Rows(rows []schema.AtlasRow) RowSource {
	return func(fn func(*schema.AtlasRow) error) error {
		for i := range rows {
			if err := fn(&rows[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// TableCount is what a publish did to one table.
type TableCount struct {
	Table    string `json:"table"`
	Rows     int    `json:"rows"`     // rows inserted
	Replaced int    `json:"replaced"` // rows of an earlier publish of this campaign, deleted
}

// campaignIDPattern keeps campaign ids printable and free of SQL-looking text.
var campaignIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Progress is told after every inserted batch: the table and its rows inserted so far.
type Progress func(table string, rows int)

// Publish replaces the campaign's rows in every table in one transaction: it deletes the rows
// carrying p.CampaignID and inserts the new ones, so publishing twice leaves one copy of each
// row, and a failure (or a kill) at any point leaves the lake exactly as it was.
func (l *Lake) Publish(ctx context.Context, p *Publication, progress Progress) (counts []TableCount, err error) {
	if !campaignIDPattern.MatchString(p.CampaignID) {
		return nil, fmt.Errorf("publish: campaign id %q: want letters, digits, '.', '_' and '-'", p.CampaignID)
	}
	if progress == nil {
		progress = func(string, int) {}
	}
	if p.PublishedAt.IsZero() {
		q := *p
		q.PublishedAt = time.Now().UTC()
		p = &q
	}
	tx, err := l.conn.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("publish to %s: begin: %w", l.loc, err)
	}
	defer func() {
		if err != nil {
			// The context may be what failed; the rollback must still reach the server.
			_ = tx.rollback(context.WithoutCancel(ctx))
			err = fmt.Errorf("publish %s to %s (rolled back, the lake is unchanged): %w", p.CampaignID, l.loc, err)
		}
	}()
	if l.d.lock != "" {
		if _, err := tx.exec(ctx, l.d.lock); err != nil {
			return nil, fmt.Errorf("take the publish lock: %w", err)
		}
	}
	if err := l.ensureSchema(ctx, tx, p.PublishedAt); err != nil {
		return nil, err
	}
	for _, t := range Tables() {
		n, err := tx.exec(ctx, l.d.deleteSQL(t), p.CampaignID)
		if err != nil {
			return nil, fmt.Errorf("%s: delete earlier rows: %w", t.Name, err)
		}
		ins := newInserter(tx, l.d, t, progress)
		if err := l.insert(ctx, ins, t, p); err != nil {
			return nil, err
		}
		if err := ins.flush(ctx); err != nil {
			return nil, err
		}
		counts = append(counts, TableCount{Table: t.Name, Rows: ins.done, Replaced: int(n)})
	}
	if err := tx.commit(ctx); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return counts, nil
}

// insert feeds one table's records to its inserter.
func (l *Lake) insert(ctx context.Context, ins *inserter, t Table, p *Publication) error {
	id := map[string]any{ColCampaignID: p.CampaignID}
	switch t.Name {
	case AtlasTable:
		if p.Atlas == nil {
			return nil
		}
		return p.Atlas(func(r *schema.AtlasRow) error {
			l := r.PointLoad() // a row written before load keys has it from its concurrency and extra.request_rate
			r.Load, r.RequestRate = l, l.Rate
			computed := map[string]any{ColCampaignID: p.CampaignID, ColInputKey: InputKey(r)}
			return ins.add(ctx, r, computed, r.CellID+"/"+l.Key())
		})
	case CampaignTable:
		var champion any
		if p.Champion != "" {
			champion = p.Champion
		}
		computed := map[string]any{ColCampaignID: p.CampaignID, ColChampion: champion,
			ColPublished: p.PublishedAt.UTC().Format(time.RFC3339)}
		return ins.add(ctx, &p.Campaign, computed, p.CampaignID)
	case TPMTable:
		for i := range p.TPM {
			r := &p.TPM[i]
			if err := ins.add(ctx, r, id, r.Point+" "+r.Hardware+" "+r.CellID); err != nil {
				return err
			}
		}
	case CostTable:
		for i := range p.Cost {
			r := &p.Cost[i]
			if err := ins.add(ctx, r, id, r.Point+" "+r.Hardware+" "+r.CellID); err != nil {
				return err
			}
		}
	case HistoryTable:
		if p.History != nil {
			return ins.add(ctx, p.History, id, p.CampaignID)
		}
	case RooflineTable:
		for i := range p.Roofline {
			r := &p.Roofline[i]
			if err := ins.add(ctx, r, id, fmt.Sprintf("%s %s c%d isl %d", r.ImportID, r.Phase, r.Concurrency, r.ISL)); err != nil {
				return err
			}
		}
	}
	return nil
}

// InputKey is atlas_v1.input_tokens_key: the row's mean input tokens, else the ISL its extra
// map carries (roofline prefill rows), else -1. With (cell, concurrency) it keys a row.
func InputKey(r *schema.AtlasRow) float64 {
	if r.MeanInputTokens != nil {
		return *r.MeanInputTokens
	}
	switch v := r.Extra["isl"].(type) {
	case float64:
		return v
	case int:
		return float64(v)
	case int64:
		return float64(v)
	}
	return -1
}

// ensureSchema creates missing tables and refuses a lake whose tables were created with other
// columns, before a single row is written.
func (l *Lake) ensureSchema(ctx context.Context, tx txn, now time.Time) error {
	if _, err := tx.exec(ctx, metaDDL); err != nil {
		return fmt.Errorf("create %s: %w", MetaTable, err)
	}
	rows, err := tx.query(ctx, "SELECT table_name, columns_sha256 FROM "+MetaTable)
	if err != nil {
		return fmt.Errorf("read %s: %w", MetaTable, err)
	}
	have := map[string]string{}
	for _, r := range rows {
		name, _ := normalize(Column{Type: Text}, r[0])
		sig, _ := normalize(Column{Type: Text}, r[1])
		n, _ := name.(string)
		s, _ := sig.(string)
		have[n] = s
	}
	for _, t := range Tables() {
		sig := t.Signature()
		if old, ok := have[t.Name]; ok {
			if old != sig {
				if err := l.upgrade(ctx, tx, t, old, sig); err != nil {
					return err
				}
			}
			continue
		}
		if _, err := tx.exec(ctx, t.CreateSQL()); err != nil {
			return fmt.Errorf("create %s: %w", t.Name, err)
		}
		q := fmt.Sprintf("INSERT INTO %s (table_name, columns_sha256, created_at) VALUES (%s, %s, %s)",
			MetaTable, l.d.placeholder(1), l.d.placeholder(2), l.d.placeholder(3))
		if _, err := tx.exec(ctx, q, t.Name, sig, now.UTC().Format(time.RFC3339)); err != nil {
			return fmt.Errorf("record %s in %s: %w", t.Name, MetaTable, err)
		}
	}
	return nil
}

// upgrade brings a table created by an older perfdag up to t: an atlas table keyed before
// load keys is rebuilt under today's key (rekeyAtlas); otherwise the columns t added since are
// nullable, so they are added (old rows read NULL) and the new signature is recorded. Any other
// difference — a column gone, or a new NOT NULL column — refuses the lake before a row is written.
func (l *Lake) upgrade(ctx context.Context, tx txn, t Table, old, sig string) error {
	stored, err := l.storedColumns(ctx, tx.query, t.Name)
	if err != nil {
		return err
	}
	if needsRekey(t, stored) {
		return l.rekeyAtlas(ctx, tx, t, stored, sig)
	}
	refuse := func(why string) error {
		return fmt.Errorf("table %s in this lake was created with other columns (signature %.12s, this perfdag writes %.12s): %s: publish to a new lake, or migrate the table to the DDL of `steps/lake` Schema()", t.Name, old, sig, why)
	}
	want := map[string]bool{}
	var missing []Column
	for _, c := range t.Columns {
		want[c.Name] = true
		if _, ok := stored[c.Name]; ok {
			continue
		}
		if !c.Null {
			return refuse("new column " + c.Name + " is NOT NULL")
		}
		missing = append(missing, c)
	}
	for name, notNull := range stored {
		if !want[name] && notNull {
			return refuse("column " + name + " is no longer written")
		}
	}
	if len(missing) == 0 {
		return refuse("no column to add explains the difference")
	}
	for _, c := range missing {
		if _, err := tx.exec(ctx, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", t.Name, c.Name, c.Type)); err != nil {
			return fmt.Errorf("add column %s to %s: %w", c.Name, t.Name, err)
		}
	}
	q := fmt.Sprintf("UPDATE %s SET columns_sha256 = %s WHERE table_name = %s", MetaTable, l.d.placeholder(1), l.d.placeholder(2))
	if _, err := tx.exec(ctx, q, sig, t.Name); err != nil {
		return fmt.Errorf("record the columns of %s in %s: %w", t.Name, MetaTable, err)
	}
	return nil
}
