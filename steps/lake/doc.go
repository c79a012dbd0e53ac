// Package lake is where published campaigns land: six versioned tables that later queries,
// dashboards and baseline diffs read, in an embedded SQLite file or a team's PostgreSQL.
//
// # Tables
//
// Schema() is the whole DDL (a copy is checked in as testdata/schema.sql, so a change to it
// shows in review). Every table has typed columns for each scalar field of its record, the
// campaign id, and row_json holding the whole record, so nothing is ever lost to the columns:
//
//	atlas_v1     schema.AtlasRow, one per (cell, concurrency[, ISL]) point.
//	             key (campaign_id, cell_id, concurrency, input_tokens_key); input_tokens_key
//	             is mean_input_tokens, else extra.isl, else -1, because the roofline prefill
//	             rows of a sweep all sit at concurrency 1 and differ only by ISL.
//	             extra_json holds the row's extra map (roofline coordinates, point status).
//	campaign_v1  schema.CampaignRow, one per campaign: coverage, dcgm_grounded, sol_rigor,
//	             roofline_present, strict, gaps (the gates passed knowingly), the source under
//	             test, the champion and published_at. key (campaign_id).
//	tpm_v1       schema.TPMRow, a peak and an sla point per deployment group.
//	cost_v1      schema.CostRow, the economics of each TPM point.
//	             both keyed (campaign_id, point, model, hardware, quant, tensor_parallel,
//	             parallel_strategy, mtp, shape).
//	roofline_v1  schema.RooflineRow, one per imported sweep point.
//	             key (campaign_id, import_id, phase, concurrency, isl).
//	history_v1   schema.HistoryRow, one per judged scheduled run (its verdict.json): verdict,
//	             trigger, baseline, knees. key (campaign_id). Read by perfdag history --lake.
//	lake_tables  the column signature each table was created with: a perfdag whose tables
//	             differ refuses to write into the lake rather than fail half way.
//
// campaign_id names one run of a campaign: <UTC-ts>-<slug>, its default directory name
// (strictpublish.CampaignID), stable when that run is published again, distinct for next
// week's run of the same slug.
// Arrays and maps are JSON text (NULL when empty); in PostgreSQL cast with ::jsonb to query
// into them. Booleans are BOOLEAN (SQLite stores 0/1).
//
// # Drivers
//
// The publish.lake URL picks the engine: sqlite://path (modernc.org/sqlite, pure Go; a
// relative path resolves against the campaign file's directory; sqlite:///abs/path for an
// absolute one) or postgres://user@host:5432/db (jackc/pgx/v5; postgresql:// too). The
// PostgreSQL password comes from the URL, PGPASSWORD or ~/.pgpass; it is never logged,
// stored or put in an error (Location.String is the URL without it). The SQL is the same
// text for both engines except placeholders (? and $1).
//
// # Idempotent, atomic publishing
//
// Publish runs one transaction: take the publish lock (SQLite: BEGIN IMMEDIATE; PostgreSQL:
// a transaction-scoped advisory lock), create missing tables, then for each table delete the
// campaign's rows and insert the new ones in multi-row batches, then commit. Publishing twice
// leaves one copy of each row. A failure or a kill at any point leaves the lake exactly as it
// was: SQLite's rollback journal undoes a killed writer at the next open, and PostgreSQL
// aborts the transaction of a dropped connection.
package lake
