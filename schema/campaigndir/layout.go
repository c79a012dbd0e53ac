// Package campaigndir is the contract of a campaign directory: the only package that spells
// its file and folder names and encodes its files. Every writer (the engine, the step kinds)
// and every reader (the report, the lake, baselines, status) goes through it, so a renamed
// file is a compile error instead of a page that silently says "no data".
//
//	campaigns/<UTC-ts>-<slug>/
//	  config.yaml  run.json  SOURCE.md  summary.md  events.jsonl  state/journal.jsonl
//	  state/slices/<cell>.{jsonl,lock}  (journals of concurrent cell slices, merged by readers)
//	  cells/<cell>/raw/<point>/{records.jsonl,point.json}   cells/<cell>/raw/prewarm.jsonl
//	  cells/<cell>/raw/burn-in/<point>/records.jsonl         cells/<cell>/commands/settle.log
//	  cells/<cell>/spec_metrics/{<point>.json,<point>.before.prom,<point>.after.prom,readings-<point>.json}
//	  cells/<cell>/dcgm_samples/<point>.json  cells/<cell>/{normalized.json,status.txt,dcgm_correlation.json,roofline_sweep.json}
//	  atlas.jsonl  tpm_summary.{json,csv,md}  champion.json  report.pdf  publish.json  verdict.json
//	  calibration.json  (the client's overhead, from perfdag calibrate)
//
// <point> is the point's load key (schema.Load.Key): c16 for a concurrency, r2.5 or
// r2.5-cap64 for a request rate with its in-flight cap.
//
// Paths returned by the cell and campaign functions are relative to the campaign directory
// and slash-separated, the form a step lists in its Result.Outputs and the journal records.
// Cell ids were validated as single path elements by the loader; the functions refuse
// anything else rather than let an id escape the directory.
package campaigndir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/perfdag/perfdag/schema"
)

// File and folder names. Unexported on purpose: callers ask for paths, never spell names.
const (
	configFile    = "config.yaml"
	runFile       = "run.json"
	sourceFile    = "SOURCE.md"
	summaryFile   = "summary.md"
	eventsFile    = "events.jsonl"
	stateDir      = "state"
	journalFile   = "journal.jsonl"
	slicesDir     = "slices"
	lockFile      = ".lock"
	freezeLock    = ".lock-freeze"
	cellsDir      = "cells"
	rawDir        = "raw"
	recordsFile   = "records.jsonl"
	pointFile     = "point.json"
	prewarmFile   = "prewarm.jsonl"
	burnInDir     = "burn-in"
	commandsDir   = "commands"
	settleLog     = "settle.log"
	specDir       = "spec_metrics"
	samplesDir    = "dcgm_samples"
	normalized    = "normalized.json"
	statusFile    = "status.txt"
	dcgmFile      = "dcgm_correlation.json"
	rooflineSweep = "roofline_sweep.json"
	sweepFile     = "sweep_probes.json"
	atlasFile     = "atlas.jsonl"
	tpmJSON       = "tpm_summary.json"
	tpmCSV        = "tpm_summary.csv"
	tpmMarkdown   = "tpm_summary.md"
	championFile  = "champion.json"
	reportFile    = "report.pdf"
	receiptFile   = "publish.json"
	verdictFile   = "verdict.json"
	calibration   = "calibration.json"
	shardsDir     = "shards"
	shardPrefix   = "records."
	shardSuffix   = ".jsonl"
)

// Names lists every file and folder name of the layout, for the test that keeps them spelled
// only here.
func Names() []string {
	return []string{configFile, runFile, sourceFile, summaryFile, eventsFile, stateDir, journalFile, slicesDir, lockFile, freezeLock,
		sweepFile, cellsDir, rawDir, recordsFile, pointFile, prewarmFile, burnInDir, commandsDir, settleLog, specDir,
		samplesDir, normalized, statusFile, dcgmFile, rooflineSweep, atlasFile, tpmJSON, tpmCSV, tpmMarkdown,
		championFile, reportFile, receiptFile, verdictFile, calibration, shardsDir}
}

// Engine files, as absolute paths under a campaign directory.

// Config is the campaign file as written, frozen when a run starts (resume reads it).
func Config(dir string) string { return filepath.Join(dir, configFile) }

// RunInfo is run.json: where the frozen file came from and what wrote the directory.
func RunInfo(dir string) string { return filepath.Join(dir, runFile) }

// Source is SOURCE.md, the human record of what was measured with what.
func Source(dir string) string { return filepath.Join(dir, sourceFile) }

// Summary is summary.md, what the last run did.
func Summary(dir string) string { return filepath.Join(dir, summaryFile) }

// Events is the append-only event log.
func Events(dir string) string { return filepath.Join(dir, eventsFile) }

// StateDir holds the checkpoint journal.
func StateDir(dir string) string { return filepath.Join(dir, stateDir) }

// Journal is the checkpoint journal, one record per line.
func Journal(dir string) string { return filepath.Join(dir, stateDir, journalFile) }

// Lock is the file a running process holds so two runs never share a directory: whole
// (exclusive) for a run and for campaign-scope slices, shared by slices of single cells.
func Lock(dir string) string { return filepath.Join(dir, lockFile) }

// FreezeLock serializes writing the frozen files (config.yaml, run.json, SOURCE.md) among
// slices that share the directory.
func FreezeLock(dir string) string { return filepath.Join(dir, freezeLock) }

// SlicesDir holds the journals of slices that ran concurrently: one per cell,
// state/slices/<cell>.jsonl, each written by one process at a time (its lock is
// state/slices/<cell>.lock). Readers merge them over the journal; the next process that takes
// the whole directory folds them into the journal and removes them.
func SlicesDir(dir string) string { return filepath.Join(dir, stateDir, slicesDir) }

// SliceJournal is one cell slice's checkpoint journal.
func SliceJournal(dir, cell string) string {
	return filepath.Join(SlicesDir(dir), mustElem(cell)+sliceJournalExt)
}

// SliceLock is the file the process running one cell's slice holds.
func SliceLock(dir, cell string) string {
	return filepath.Join(SlicesDir(dir), mustElem(cell)+sliceLockExt)
}

const (
	sliceJournalExt = ".jsonl"
	sliceLockExt    = ".lock"
)

// SliceJournals lists the slice journals present, sorted by cell (the merge order).
func SliceJournals(dir string) ([]string, error) {
	entries, err := os.ReadDir(SlicesDir(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list slice journals: %w", err)
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(n, sliceJournalExt) && !strings.HasPrefix(n, ".") {
			out = append(out, filepath.Join(SlicesDir(dir), n))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Step outputs, relative to the campaign directory.

// CellDir is a cell's folder.
func CellDir(cell string) string { return path.Join(cellsDir, mustElem(cell)) }

// Cells is the folder holding every cell's folder.
func Cells() string { return cellsDir }

func pointDir(cell string, l schema.Load) string {
	return path.Join(CellDir(cell), rawDir, pointElem(l))
}

// pointElem is a point's key as a path element (c16, r2.5-cap64).
func pointElem(l schema.Load) string { return mustElem(l.Key()) }

// Records is a point's per-request records (JSON Lines).
func Records(cell string, l schema.Load) string { return path.Join(pointDir(cell, l), recordsFile) }

// Shards is the folder of a point's per-client records when its load is split over clients.
func Shards(cell string, l schema.Load) string { return path.Join(pointDir(cell, l), shardsDir) }

// ShardRecords is client k's records of a point split over clients (k from 0), stamped on
// that client's own clock; records.jsonl beside it holds them all on the coordinator's.
func ShardRecords(cell string, l schema.Load, k int) string {
	return path.Join(Shards(cell, l), fmt.Sprintf("%s%d%s", shardPrefix, k, shardSuffix))
}

// Point is a point's statistics (point_v1).
func Point(cell string, l schema.Load) string { return path.Join(pointDir(cell, l), pointFile) }

// PrewarmRecords are a cell's prewarm requests.
func PrewarmRecords(cell string) string { return path.Join(CellDir(cell), rawDir, prewarmFile) }

// BurnInRecords are a cell's discarded burn-in pass at one point.
func BurnInRecords(cell string, l schema.Load) string {
	return path.Join(CellDir(cell), rawDir, burnInDir, pointElem(l), recordsFile)
}

// SettleLog records the settle discipline a cell ran with.
func SettleLog(cell string) string { return path.Join(CellDir(cell), commandsDir, settleLog) }

// SpecWindow is a point's spec-decode and server-metric window (spec_window_v1).
func SpecWindow(cell string, l schema.Load) string {
	return path.Join(CellDir(cell), specDir, pointElem(l)+".json")
}

// Scrape is the raw /metrics text a bracketing scrape took before or after a point.
func Scrape(cell string, l schema.Load, phase string) string {
	return path.Join(CellDir(cell), specDir, pointElem(l)+"."+mustElem(phase)+".prom")
}

// MetricsSamples are the /metrics readings sampled during a point's window.
func MetricsSamples(cell string, l schema.Load) string {
	return path.Join(CellDir(cell), specDir, "readings-"+pointElem(l)+".json")
}

// DCGMSamples are the DCGM exporter samples taken during a point's window.
func DCGMSamples(cell string, l schema.Load) string {
	return path.Join(CellDir(cell), samplesDir, pointElem(l)+".json")
}

// DCGMCorrelation is a cell's DCGM window means per point.
func DCGMCorrelation(cell string) string { return path.Join(CellDir(cell), dcgmFile) }

// Normalized is a cell's atlas rows.
func Normalized(cell string) string { return path.Join(CellDir(cell), normalized) }

// CellStatus is a cell's full/partial/failed status.
func CellStatus(cell string) string { return path.Join(CellDir(cell), statusFile) }

// Sweep is a cell's run-time sweep: its SLO search's probes and knee, its stopped list, or sweep: auto's points.
func Sweep(cell string) string { return path.Join(CellDir(cell), sweepFile) }

// RooflineSweep is the roofline sweep an import wrote beside its decode cell.
func RooflineSweep(cell string) string { return path.Join(CellDir(cell), rooflineSweep) }

// Atlas is the union of every cell's rows (atlas_v1 JSON Lines).
func Atlas() string { return atlasFile }

// TPMJSON, TPMCSV and TPMMarkdown are the TPM and cost rollup in its three forms.
func TPMJSON() string { return tpmJSON }

// TPMCSV is the TPM rollup as CSV.
func TPMCSV() string { return tpmCSV }

// TPMMarkdown is the TPM rollup as a Markdown table.
func TPMMarkdown() string { return tpmMarkdown }

// Champion is champion-select's decision.
func Champion() string { return championFile }

// Report is the PDF report.
func Report() string { return reportFile }

// Receipt is what strict-publish wrote to the lake.
func Receipt() string { return receiptFile }

// Verdict is a scheduled run's baseline verdict.
func Verdict() string { return verdictFile }

// Calibration is the client machine's own overhead (calibration_v1), written by
// `perfdag calibrate`, not by a step: the report reads it as it is, without a digest.
func Calibration() string { return calibration }

// Abs joins a relative layout path onto a campaign directory.
func Abs(dir, rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }

// mustElem guards the layout against ids that are not one path element; the loader
// validates ids, so this firing is a programming error, not a user's.
func mustElem(s string) string {
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, `/\`) {
		panic(fmt.Sprintf("campaigndir: %q is not a single path element", s))
	}
	return s
}

// Inside reports whether rel is a relative path that stays inside the campaign directory.
func Inside(rel string) bool {
	clean := filepath.Clean(filepath.FromSlash(rel))
	return !filepath.IsAbs(clean) && clean != ".." && !strings.HasPrefix(clean, ".."+string(filepath.Separator))
}
