// Package atlas turns a cell's measured points into atlas rows (schema atlas_v1) and unions
// every cell into the campaign's atlas.jsonl with its coverage line — the one table every
// later stage (TPM, report, lake, champion) reads.
//
// Files it owns in a campaign directory:
//
//	cells/<id>/normalized.json  the cell's rows, a JSON array ordered by concurrency
//	cells/<id>/status.txt       full, partial or failed (plus a newline)
//	atlas.jsonl                 every cell's rows, one JSON object a line, ordered by
//	                            (cell id, concurrency, mean input tokens)
//
// Every file is written atomically (temp file in the same directory, fsync, rename), so a
// crash never leaves a half-written file for a resume to read back. Aggregation streams:
// memory is bounded by the largest cell, not by the atlas.
package atlas
