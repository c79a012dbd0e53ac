package campaign

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Inspection is a campaign directory read against its frozen file, writing nothing.
type Inspection struct {
	Dir      string
	Info     campaigndir.Info
	Compiled *Compiled
	State    *run.State
}

// Inspect reads dir's journal against its frozen campaign file: every node's latest state and
// whether a recorded success still matches the file.
func (s *Service) Inspect(dir string) (*Inspection, error) {
	c, info, err := s.Frozen(dir)
	if err != nil {
		return nil, err
	}
	st, err := run.New(c.Plan, dir, run.Options{Registry: s.Registry}).Inspect()
	if err != nil {
		return nil, err
	}
	return &Inspection{Dir: dir, Info: info, Compiled: c, State: st}, nil
}

// Open reads a finished campaign for the verbs that use its results: only the latest run's
// state, refused (CodeFailed, naming the nodes and what to do) when any recorded result no
// longer matches the frozen campaign file. The evidence is what the steps' results name.
func (s *Service) Open(dir string) (campaigndir.Finished, error) {
	in, err := s.Inspect(dir)
	if err != nil {
		return campaigndir.Finished{}, err
	}
	return in.Finished()
}

// Finished is the inspected campaign as a finished one, refused when stale.
func (in *Inspection) Finished() (campaigndir.Finished, error) {
	if err := in.State.Check(); err != nil {
		return campaigndir.Finished{}, Coded(CodeFailed, err)
	}
	f := campaigndir.Finished{Dir: in.Dir, BaseDir: in.Info.BaseDir, Spec: in.Compiled.Spec(), Files: in.State.Files,
		Verdicts: in.State.Verdicts()}
	var values []any
	for _, n := range in.State.Nodes {
		if n.State != run.StateSucceeded {
			continue
		}
		v, err := in.State.Result(n.Node)
		if err != nil {
			return f, fmt.Errorf("read the result of %s: %w", n.Node, err)
		}
		values = append(values, v)
	}
	f.Evidence = campaigndir.Collect(values)
	return f, nil
}

// Rerun runs every node of one kind again in dir (re-rendering a report after an upgrade),
// from its inputs as recorded, and then the nodes downstream of them that had succeeded and its
// new outputs put out of date (a strict-publish of the new report), so the directory stays a
// finished campaign; when anything else would have to run first — the results are stale or unfinished —
// it refuses instead of measuring again.
func (s *Service) Rerun(ctx context.Context, dir, kind string, o RunOptions) (*Outcome, error) {
	in, err := s.Inspect(dir)
	if err != nil {
		return nil, err
	}
	c := in.Compiled
	// a downstream node runs again only if it had succeeded: a failed one stays as it was, for
	// resume to retry
	succeeded := map[string]bool{}
	for _, n := range in.State.Nodes {
		succeeded[n.Node] = n.State == run.StateSucceeded
	}
	var ids, downstream []string
	after := map[string]bool{}
	for _, n := range c.Plan.Nodes { // topological order: a node's needs come before it
		if n.Skip != "" {
			continue
		}
		if n.Step.Kind.Name == kind {
			ids = append(ids, n.ID)
			after[n.ID] = true
			continue
		}
		for _, d := range n.Deps {
			if after[d.Node.ID] {
				after[n.ID] = true
				if succeeded[n.ID] {
					downstream = append(downstream, n.ID)
				}
				break
			}
		}
	}
	if len(ids) == 0 {
		return nil, Coded(CodeUsage, fmt.Errorf("campaign %s has no %s step", c.Spec().Campaign, kind))
	}
	o.Only, o.Force = append(slices.Clone(ids), downstream...), ids
	dec, err := s.DryRun(c, dir, o)
	if err != nil {
		return nil, err
	}
	for _, d := range dec {
		if d.Action == run.ActRun && !after[d.Node] {
			return nil, Coded(CodeFailed, fmt.Errorf("%s would have to run first (%s): finish the campaign with 'perfdag resume %s'",
				d.Node, strings.Join(d.Reasons, "; "), dir))
		}
	}
	return s.Resume(ctx, dir, o)
}
