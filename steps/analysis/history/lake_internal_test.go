package history

import (
	"testing"

	"github.com/perfdag/perfdag/steps/lake"
)

// TestLakeTableNames: the table names history reads are the lake's.
func TestLakeTableNames(t *testing.T) {
	if historyTable != lake.HistoryTable || campaignTable != lake.CampaignTable || atlasTable != lake.AtlasTable {
		t.Errorf("history reads %s, %s, %s; the lake names %s, %s, %s", historyTable, campaignTable, atlasTable, lake.HistoryTable, lake.CampaignTable, lake.AtlasTable)
	}
}
