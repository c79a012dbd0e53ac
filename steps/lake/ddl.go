package lake

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// MetaTable records, per lake table, the signature of the columns it was created with, so a
// perfdag whose tables differ refuses to write into an old lake instead of failing midway.
const MetaTable = "lake_tables"

const metaDDL = `-- lake_tables: the column signature each lake table was created with
CREATE TABLE IF NOT EXISTS lake_tables (
  table_name TEXT NOT NULL PRIMARY KEY,
  columns_sha256 TEXT NOT NULL, -- sha256 of the table's name, columns (name type null) and key
  created_at TEXT NOT NULL -- RFC 3339 UTC
);
`

// CreateSQL is the table's CREATE TABLE IF NOT EXISTS statement, one commented line per column;
// the same text runs on SQLite and PostgreSQL.
func (t Table) CreateSQL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- %s: %s\n", t.Name, t.Doc)
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (\n", t.Name)
	for _, c := range t.Columns {
		null := " NOT NULL"
		if c.Null {
			null = ""
		}
		fmt.Fprintf(&b, "  %s %s%s,", c.Name, c.Type, null)
		if c.Doc != "" {
			fmt.Fprintf(&b, " -- %s", c.Doc)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  PRIMARY KEY (%s)\n);\n", strings.Join(t.Key, ", "))
	return b.String()
}

// Signature hashes what a stored table's shape depends on (not its comments).
func (t Table) Signature() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", t.Name)
	for _, c := range t.Columns {
		fmt.Fprintf(h, "%s %s %t\n", c.Name, c.Type, c.Null)
	}
	fmt.Fprintf(h, "key %s\n", strings.Join(t.Key, ","))
	return hex.EncodeToString(h.Sum(nil))
}

// Schema is the lake's whole DDL: every table's CREATE TABLE and the meta table. It is the
// documented schema (steps/lake/testdata/schema.sql holds a copy checked by a test).
func Schema() string {
	var b strings.Builder
	b.WriteString("-- perfdag lake schema: the same DDL runs on SQLite and PostgreSQL.\n")
	b.WriteString("-- Every table carries campaign_id; publishing a campaign deletes its rows in every\n")
	b.WriteString("-- table and inserts the new ones in one transaction.\n\n")
	for _, t := range Tables() {
		b.WriteString(t.CreateSQL())
		b.WriteString("\n")
	}
	b.WriteString(metaDDL)
	return b.String()
}

// dialect is what differs between the engines: placeholders and the publish lock.
type dialect struct {
	name        string
	placeholder func(i int) string // 1-based
	lock        string             // statement that serializes publishers inside a transaction
	tableExists string             // SELECT COUNT(*) of tables named $1
	columns     string             // SELECT the column names and NOT NULL-ness of table $1
}

var (
	sqliteDialect = dialect{name: "sqlite", placeholder: func(int) string { return "?" },
		tableExists: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
		columns:     "SELECT name, \"notnull\" FROM pragma_table_info(?)"}
	// The advisory lock key is arbitrary but fixed: every perfdag publisher takes the same one,
	// so two publishes (and first-time table creation) never interleave.
	postgresDialect = dialect{name: "postgres", placeholder: func(i int) string { return fmt.Sprintf("$%d", i) },
		lock:        "SELECT pg_advisory_xact_lock(7270010001)",
		tableExists: "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1",
		columns:     "SELECT column_name, CASE WHEN is_nullable = 'NO' THEN 1 ELSE 0 END FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1"}
)

// columnNames lists a table's column names.
func (t Table) columnNames() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}

// insertSQL is a multi-row INSERT of n rows.
func (d dialect) insertSQL(t Table, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", t.Name, strings.Join(t.columnNames(), ", "))
	k := 1
	for r := range n {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range t.Columns {
			if c > 0 {
				b.WriteString(", ")
			}
			b.WriteString(d.placeholder(k))
			k++
		}
		b.WriteByte(')')
	}
	return b.String()
}

func (d dialect) deleteSQL(t Table) string {
	return fmt.Sprintf("DELETE FROM %s WHERE %s = %s", t.Name, ColCampaignID, d.placeholder(1))
}

func (d dialect) selectSQL(t Table) string {
	return d.selectColumnsSQL(t, t.columnNames(), t.order())
}

// selectColumnsSQL selects some columns of a campaign's rows in order.
func (d dialect) selectColumnsSQL(t Table, cols, order []string) string {
	return fmt.Sprintf("SELECT %s FROM %s WHERE %s = %s ORDER BY %s", strings.Join(cols, ", "),
		t.Name, ColCampaignID, d.placeholder(1), strings.Join(order, ", "))
}

// order is the ORDER BY of Read.
func (t Table) order() []string {
	if t.Order != nil {
		return t.Order
	}
	return t.Key
}

func (d dialect) countSQL(t Table) string {
	return fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s = %s", t.Name, ColCampaignID, d.placeholder(1))
}
