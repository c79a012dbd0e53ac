package atlas

import (
	"fmt"
	"slices"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// WriteCell writes a cell's rows (sorted into atlas order) and status through the campaign
// directory contract, after checking they belong to the cell.
func WriteCell(campaignDir, cellID string, rows []schema.AtlasRow, status string) (campaigndir.CellFiles, error) {
	if err := checkStatus(status); err != nil {
		return campaigndir.CellFiles{}, fmt.Errorf("write cell %s: %w", cellID, err)
	}
	for i := range rows {
		if rows[i].CellID != cellID {
			return campaigndir.CellFiles{}, fmt.Errorf("write cell %s: row %d has cell_id %q", cellID, i, rows[i].CellID)
		}
	}
	sorted := append([]schema.AtlasRow(nil), rows...)
	SortRows(sorted)
	return campaigndir.WriteCell(campaignDir, cellID, sorted, status)
}

// ReadCell reads a cell's rows and status, checking that every row belongs to the cell and
// agrees with its status; rows come back in atlas order.
func ReadCell(r campaigndir.Reader, files campaigndir.CellFiles) ([]schema.AtlasRow, string, error) {
	rows, _, status, err := readCellLines(campaigndir.NewCellReader(r), files)
	return rows, status, err
}

// readCellLines is ReadCell through cr that also returns each row's atlas line when the file
// holds it (see campaigndir.ReadCellLines), in the same order as the rows.
func readCellLines(cr *campaigndir.CellReader, files campaigndir.CellFiles) ([]schema.AtlasRow, [][]byte, string, error) {
	rows, lines, status, err := cr.Read(files)
	if err != nil {
		return nil, nil, "", err
	}
	if err := checkStatus(status); err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", files.Status, err)
	}
	for i := range rows {
		if rows[i].CellID != files.Cell {
			return nil, nil, "", fmt.Errorf("%s: [%d].cell_id: %q, want %q", files.Normalized, i, rows[i].CellID, files.Cell)
		}
		if rows[i].CellStatus != status {
			return nil, nil, "", fmt.Errorf("%s: [%d].cell_status: %q disagrees with %s (%q)", files.Normalized, i, rows[i].CellStatus, files.Status, status)
		}
	}
	if sorted(rows) {
		return rows, lines, status, nil // as WriteCell writes them
	}
	if lines == nil {
		SortRows(rows)
		return rows, nil, status, nil
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return compareKeys(keyOf(&rows[a]), keyOf(&rows[b])) })
	byKey, keyLines := make([]schema.AtlasRow, len(rows)), make([][]byte, len(rows))
	for i, j := range order {
		byKey[i], keyLines[i] = rows[j], lines[j]
	}
	return byKey, keyLines, status, nil
}

// sorted reports whether rows are in atlas order, without copying them.
func sorted(rows []schema.AtlasRow) bool {
	for i := 1; i < len(rows); i++ {
		if compareKeys(keyOf(&rows[i-1]), keyOf(&rows[i])) > 0 {
			return false
		}
	}
	return true
}

func checkStatus(s string) error {
	switch s {
	case schema.CellFull, schema.CellPartial, schema.CellFailed:
		return nil
	}
	return fmt.Errorf("cell status %q: want full, partial or failed", s)
}

// AttachVerdicts puts on each row the verdicts that did not pass on its point (or, for a
// cell-scope node, on its cell): the evidence of a failing gate travels with the numbers.
func AttachVerdicts(rows []schema.AtlasRow, verdicts []schema.GateVerdict) {
	for i := range rows {
		rows[i].Gates = nil
		for _, v := range verdicts {
			if v.Passed || v.Cell != rows[i].CellID || (v.Point() != "" && v.Point() != rows[i].PointLoad().Key()) {
				continue
			}
			rows[i].Gates = append(rows[i].Gates, v)
		}
	}
}
