package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver (pure Go, no cgo)
)

// conn is one open lake connection, whatever the engine.
type conn interface {
	begin(ctx context.Context) (txn, error)
	query(ctx context.Context, sql string, args ...any) ([][]any, error)
	close(ctx context.Context) error
}

// txn is one open transaction.
type txn interface {
	exec(ctx context.Context, sql string, args ...any) (int64, error)
	query(ctx context.Context, sql string, args ...any) ([][]any, error)
	commit(ctx context.Context) error
	rollback(ctx context.Context) error
}

// sqliteBusyMS is how long a publisher waits for another one holding the write lock.
const sqliteBusyMS = 30000

// openSQLite opens (creating when missing) the database file. Transactions begin IMMEDIATE,
// so a publisher takes the write lock up front and two publishers queue instead of deadlocking;
// the rollback journal (SQLite's default) makes a killed publish roll back at the next open.
func openSQLite(ctx context.Context, path string) (conn, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create lake directory: %w", err)
	}
	dsn := fmt.Sprintf("%s?_txlock=immediate&_pragma=busy_timeout(%d)&_pragma=synchronous(FULL)", path, sqliteBusyMS)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one writer; reads share it
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return &sqlConn{db: db}, nil
}

type sqlConn struct{ db *sql.DB }

func (c *sqlConn) begin(ctx context.Context) (txn, error) {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &sqlTx{tx: tx}, nil
}

func (c *sqlConn) query(ctx context.Context, q string, args ...any) ([][]any, error) {
	rows, err := c.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanAll(rows)
}

func (c *sqlConn) close(context.Context) error { return c.db.Close() }

type sqlTx struct{ tx *sql.Tx }

func (t *sqlTx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t *sqlTx) query(ctx context.Context, q string, args ...any) ([][]any, error) {
	rows, err := t.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanAll(rows)
}

func (t *sqlTx) commit(context.Context) error { return t.tx.Commit() }

func (t *sqlTx) rollback(context.Context) error {
	if err := t.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return err
	}
	return nil
}

func scanAll(rows *sql.Rows) ([][]any, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// openPostgres connects with pgx. The password comes from the URL, PGPASSWORD or ~/.pgpass
// (pgx reads the libpq environment); it is never logged or stored.
func openPostgres(ctx context.Context, loc Location) (conn, error) {
	c, err := pgx.Connect(ctx, loc.dsn)
	if err != nil {
		return nil, loc.scrub(err)
	}
	return &pgConn{c: c, loc: loc}, nil
}

type pgConn struct {
	c   *pgx.Conn
	loc Location
}

func (c *pgConn) begin(ctx context.Context) (txn, error) {
	tx, err := c.c.Begin(ctx)
	if err != nil {
		return nil, c.loc.scrub(err)
	}
	return &pgTx{tx: tx, loc: c.loc}, nil
}

func (c *pgConn) query(ctx context.Context, q string, args ...any) ([][]any, error) {
	rows, err := c.c.Query(ctx, q, args...)
	if err != nil {
		return nil, c.loc.scrub(err)
	}
	out, err := collect(rows)
	return out, c.loc.scrub(err)
}

func (c *pgConn) close(ctx context.Context) error { return c.c.Close(ctx) }

type pgTx struct {
	tx  pgx.Tx
	loc Location
}

func (t *pgTx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, q, args...)
	if err != nil {
		return 0, t.loc.scrub(err)
	}
	return tag.RowsAffected(), nil
}

func (t *pgTx) query(ctx context.Context, q string, args ...any) ([][]any, error) {
	rows, err := t.tx.Query(ctx, q, args...)
	if err != nil {
		return nil, t.loc.scrub(err)
	}
	out, err := collect(rows)
	return out, t.loc.scrub(err)
}

func (t *pgTx) commit(ctx context.Context) error { return t.loc.scrub(t.tx.Commit(ctx)) }

func (t *pgTx) rollback(ctx context.Context) error {
	if err := t.tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return t.loc.scrub(err)
	}
	return nil
}

func collect(rows pgx.Rows) ([][]any, error) {
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}
