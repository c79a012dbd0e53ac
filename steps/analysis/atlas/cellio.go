package atlas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/schema"
)

// File names inside a cell directory and the campaign directory.
const (
	NormalizedFile = "normalized.json"
	StatusFile     = "status.txt"
	AtlasFile      = "atlas.jsonl"
)

// CellDir is where a cell's files live inside a campaign directory.
func CellDir(campaignDir, cellID string) string {
	return filepath.Join(campaignDir, "cells", cellID)
}

// NormalizeCell reads a cell's measured files (raw/c<N>/point.json, spec_metrics/c<N>.json,
// dcgm_correlation.json), normalizes them and writes normalized.json and status.txt. A missing
// point.json is a missing point (the row is kept, gray); a malformed file is an error naming it.
func NormalizeCell(ctx context.Context, campaignDir, campaign string, cell schema.Cell) ([]schema.AtlasRow, string, error) {
	dir := CellDir(campaignDir, cell.ID)
	var points []schema.Point
	spec := map[int]*schema.SpecWindow{}
	for _, c := range cell.Concurrencies {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		var p schema.Point
		found, err := ReadJSON(filepath.Join(dir, "raw", "c"+strconv.Itoa(c), "point.json"), &p)
		if err != nil {
			return nil, "", err
		}
		if found {
			p.Concurrency = c
			points = append(points, p)
		}
		var w schema.SpecWindow
		found, err = ReadJSON(filepath.Join(dir, "spec_metrics", "c"+strconv.Itoa(c)+".json"), &w)
		if err != nil {
			return nil, "", err
		}
		if found {
			spec[c] = &w
		}
	}
	var dcgm *schema.DCGMCorrelation
	var d schema.DCGMCorrelation
	found, err := ReadJSON(filepath.Join(dir, "dcgm_correlation.json"), &d)
	if err != nil {
		return nil, "", err
	}
	if found {
		dcgm = &d
	}
	rows, status := Normalize(campaign, cell, points, spec, dcgm)
	if err := WriteCell(campaignDir, cell.ID, rows, status); err != nil {
		return nil, "", err
	}
	return rows, status, nil
}

// WriteCell writes cells/<id>/normalized.json and status.txt atomically, rows in atlas order.
func WriteCell(campaignDir, cellID string, rows []schema.AtlasRow, status string) error {
	if err := checkStatus(status); err != nil {
		return fmt.Errorf("write cell %s: %w", cellID, err)
	}
	for i := range rows {
		if rows[i].CellID != cellID {
			return fmt.Errorf("write cell %s: row %d has cell_id %q", cellID, i, rows[i].CellID)
		}
	}
	sorted := append([]schema.AtlasRow(nil), rows...)
	SortRows(sorted)
	b, err := EncodeJSON(sorted)
	if err != nil {
		return fmt.Errorf("encode cell %s: %w", cellID, err)
	}
	dir := CellDir(campaignDir, cellID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write cell %s: %w", cellID, err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, NormalizedFile), b); err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, StatusFile), []byte(status+"\n"))
}

// ReadCell reads a cell's normalized.json and status.txt; rows come back in atlas order.
func ReadCell(campaignDir, cellID string) ([]schema.AtlasRow, string, error) {
	dir := CellDir(campaignDir, cellID)
	path := filepath.Join(dir, NormalizedFile)
	var rows []schema.AtlasRow
	found, err := ReadJSON(path, &rows)
	if err != nil {
		return nil, "", err
	}
	if !found {
		return nil, "", fmt.Errorf("read cell %s: %s: %w", cellID, path, fs.ErrNotExist)
	}
	statusPath := filepath.Join(dir, StatusFile)
	b, err := os.ReadFile(statusPath)
	if err != nil {
		return nil, "", fmt.Errorf("read cell %s: %w", cellID, err)
	}
	status := strings.TrimSpace(string(b))
	if err := checkStatus(status); err != nil {
		return nil, "", fmt.Errorf("%s: %w", statusPath, err)
	}
	for i := range rows {
		if rows[i].CellID != cellID {
			return nil, "", fmt.Errorf("%s: [%d].cell_id: %q, want %q", path, i, rows[i].CellID, cellID)
		}
		if rows[i].CellStatus != status {
			return nil, "", fmt.Errorf("%s: [%d].cell_status: %q disagrees with %s (%q)", path, i, rows[i].CellStatus, statusPath, status)
		}
	}
	SortRows(rows)
	return rows, status, nil
}

func checkStatus(s string) error {
	switch s {
	case schema.CellFull, schema.CellPartial, schema.CellFailed:
		return nil
	}
	return fmt.Errorf("cell status %q: want full, partial or failed", s)
}

// ReadJSON decodes the JSON file at path into v strictly (unknown fields are an error); a
// file that does not exist reports found=false and no error.
func ReadJSON(path string, v any) (found bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return true, fmt.Errorf("decode %s: %w", path, err)
	}
	return true, nil
}

// EncodeJSON is indented, newline-terminated JSON that keeps "<", ">" and "&" readable (the
// files are read by people as much as by programs).
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteFileAtomic writes data to path through a temp file in the same directory, fsynced and
// renamed, so a reader (or a resumed run) sees the old file or the new one, never a torn one.
func WriteFileAtomic(path string, data []byte) error {
	return writeAtomic(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// writeAtomic streams into a temp file beside path, then fsyncs, renames and syncs the directory.
func writeAtomic(path string, fill func(f *os.File) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err = fill(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
