package history

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/perfdag/perfdag/schema"
)

// The lake tables history reads, as steps/lake names them (a layer above: the names are
// repeated here, and TestLakeTableNames holds them equal).
const (
	historyTable  = schema.SchemaHistoryRow  // historyTable
	campaignTable = schema.SchemaCampaignRow // campaignTable
	atlasTable    = "atlas_v1"               // atlasTable
)

// Lake is what history reads of a lake (*lake.Lake).
type Lake interface {
	Runs(ctx context.Context, campaign string) ([]string, error)
	Records(ctx context.Context, table, campaignID string) ([]string, error)
}

// FromLake reads a campaign's history from a lake its runs were published to: each history_v1
// row with the run's atlas_v1 rows and its campaign_v1 row (the versions), whichever machine
// published it. Only published runs are there: a run that made no campaign directory, or was
// never published after its verdict, is only in its scheduler's history.jsonl.
func FromLake(ctx context.Context, l Lake, campaign string, annotate ...Annotator) (*History, error) {
	ids, err := l.Runs(ctx, campaign)
	if err != nil {
		return nil, err
	}
	runs := make([]Run, 0, len(ids))
	for _, id := range ids {
		r, err := lakeRun(ctx, l, id)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		runs = append(runs, r)
	}
	return Build(campaign, runs, annotate...)
}

func lakeRun(ctx context.Context, l Lake, id string) (Run, error) {
	var row schema.HistoryRow
	if err := one(ctx, l, historyTable, id, &row); err != nil {
		return Run{}, err
	}
	var c schema.CampaignRow
	if err := one(ctx, l, campaignTable, id, &c); err != nil {
		return Run{}, err
	}
	recs, err := l.Records(ctx, atlasTable, id)
	if err != nil {
		return Run{}, err
	}
	rows := make([]schema.AtlasRow, len(recs))
	for i, rec := range recs {
		if err := json.Unmarshal([]byte(rec), &rows[i]); err != nil {
			return Run{}, fmt.Errorf("%s row_json: %w", atlasTable, err)
		}
	}
	v := versionsOf(nil, rows)
	v.Engine, v.EngineVersion, v.Commit, v.Delivery = c.Engine, c.EngineVersion, c.Commit, c.Delivery
	return newRun(id, row, v, rows), nil
}

// one decodes a run's single row of a table.
func one(ctx context.Context, l Lake, table, id string, into any) error {
	recs, err := l.Records(ctx, table, id)
	if err != nil {
		return err
	}
	if len(recs) != 1 {
		return fmt.Errorf("%s holds %d rows for it, want 1", table, len(recs))
	}
	if err := json.Unmarshal([]byte(recs[0]), into); err != nil {
		return fmt.Errorf("%s row_json: %w", table, err)
	}
	return nil
}
