package run

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/plan"
)

// Unselected is a node pattern (--only, --force) that matches no node of the plan. A
// misspelt or stale cell id would otherwise select nothing and the run would pass having
// measured nothing, so it is bad usage.
type Unselected struct {
	Campaign string   // the campaign's slug
	Option   string   // the option the pattern came from: --only or --force
	Pattern  string   // as given
	Nearest  []string // the node ids closest to it in edit distance, nearest first
}

// nearestShown is how many node ids an Unselected offers.
const nearestShown = 3

func (u *Unselected) Error() string {
	msg := fmt.Sprintf("%s %q matches no node of campaign %s", u.Option, u.Pattern, u.Campaign)
	if len(u.Nearest) > 0 {
		msg += "; closest: " + strings.Join(u.Nearest, ", ")
	}
	return msg
}

// CheckSelection returns an *Unselected for every pattern of o.Only and o.Force that matches
// no node of p (joined), or nil. --only-list lines are --only patterns. In dir (a campaign
// directory, or "" for a fresh one) the nodes of every probe a fan-out node's checkpoint says
// it made count too: status lists them, so they can be re-measured by name.
func CheckSelection(p *plan.Plan, dir string, o Options) error {
	if len(o.Only) == 0 && len(o.Force) == 0 {
		return nil
	}
	ids := make([]string, len(p.Nodes))
	for i, n := range p.Nodes {
		ids[i] = n.ID
	}
	recorded, err := recordedProbes(p, dir)
	if err != nil {
		return err
	}
	ids = append(ids, recorded...)
	var errs []error
	for _, set := range []struct {
		option   string
		patterns []string
	}{{"--only", o.Only}, {"--force", o.Force}} {
		for _, g := range set.patterns {
			if !matchesAny(g, ids) {
				errs = append(errs, &Unselected{Campaign: p.Campaign.Spec.Campaign, Option: set.option, Pattern: g,
					Nearest: diag.Closest(g, ids, nearestShown)})
			}
		}
	}
	return errors.Join(errs...)
}

// matchesAny reports whether glob (as Match reads it) matches one of ids.
func matchesAny(glob string, ids []string) bool {
	re := globRE(glob)
	for _, id := range ids {
		if id == glob || re.MatchString(id) {
			return true
		}
	}
	return false
}

// recordedProbes are the ids of the run-time nodes dir's checkpoints say p's fan-out nodes
// made (the groups a run replays), none for a directory without checkpoints.
func recordedProbes(p *plan.Plan, dir string) ([]string, error) {
	if st, err := os.Stat(dir); dir == "" || err != nil || !st.IsDir() {
		return nil, nil // a fresh directory (or none: the run says what is wrong with it)
	}
	records, err := checkpoint.ReadOnly(dir).LoadAll()
	if err != nil {
		return nil, fmt.Errorf("read the checkpoints of %s: %w", dir, err)
	}
	var ids []string
	for _, n := range p.Snapshot() {
		if rec := records[n.ID]; rec != nil && n.Fanout() {
			for _, c := range rec.Fanout {
				ids = append(ids, p.PointIDs(n, c)...)
			}
		}
	}
	return ids, nil
}
