package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/changepoint"
	"github.com/perfdag/perfdag/steps/analysis/history"
	"github.com/perfdag/perfdag/steps/render"
	"github.com/perfdag/perfdag/steps/report"
	strictpublish "github.com/perfdag/perfdag/steps/strict-publish"
)

// trendRuns is how many runs a scheduled run's trend page draws, ending at the run.
const trendRuns = 10

// trendOf is a judged scheduled run's trend: its campaign's last runs from the scheduler state
// beside it (the root holding the runs keeps .schedule); nil for a run not judged yet.
func (a *app) trendOf(ctx context.Context, dir string, c *schema.Campaign) *report.Trend {
	if c == nil || c.Schedule == nil {
		return nil
	}
	var v schema.Verdict
	if found, err := campaigndir.ReadJSON(dir, campaigndir.Verdict(), &v); err != nil || !found {
		return nil
	}
	root := filepath.Dir(abs(dir))
	state, err := history.Locate(root)
	if err == nil && state == "" {
		err = fmt.Errorf("%s holds no scheduler state (.schedule/history.jsonl)", root)
	}
	if err != nil {
		return &report.Trend{Note: err.Error()}
	}
	h, err := history.Window(ctx, state, dir, trendRuns, history.DirOptions{Campaign: c.Campaign, Open: a.open, ID: strictpublish.CampaignID,
		Annotate: []history.Annotator{history.ChangePoints(changepoint.Options{})}})
	if err != nil {
		return &report.Trend{Note: err.Error()}
	}
	return &report.Trend{History: h, Run: strictpublish.CampaignID(abs(dir), c.Campaign)}
}

// rerender re-runs a campaign directory's render step in place (perfdag report DIR), and the
// steps after it its new report puts out of date (a strict-publish reads it), so the directory
// stays a finished campaign that history and publishing read: a judged scheduled run's report
// gains its trend page.
func (a *app) rerender(ctx context.Context, dir string) (*campaign.Outcome, error) {
	svc, err := a.service()
	if err != nil {
		return nil, err
	}
	return svc.Rerun(render.WithTrend(ctx, a.trendOf), dir, render.Kind.Name, campaign.RunOptions{})
}

// rerenderJudged re-renders a judged scheduled run's report with its trend page (the
// scheduler's hook, once the verdict is final).
func (a *app) rerenderJudged(ctx context.Context, dir string) error {
	_, err := a.rerender(ctx, dir)
	return err
}
