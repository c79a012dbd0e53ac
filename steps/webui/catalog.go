package webui

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/engine/workspace"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// entry is one served campaign directory: the id its addresses use and where it lives. Ids
// come from this table only, so no address names a path.
type entry struct {
	ID  string
	Dir string
}

// campaigns lists the served campaign directories, read afresh (a run started after serve
// appears). A root that is itself a campaign is one entry; otherwise its sub-directories that
// hold a run.json are. Ids are directory names, suffixed when two roots hold the same name.
func (s *Server) campaigns() []entry {
	var out []entry
	seen := map[string]int{}
	add := func(dir string) {
		id := filepath.Base(dir)
		if n := seen[id]; n > 0 {
			id += "~" + strconv.Itoa(n+1)
		}
		seen[filepath.Base(dir)]++
		out = append(out, entry{ID: id, Dir: dir})
	}
	for _, root := range s.opts.Roots {
		if isCampaign(root) {
			add(root)
			continue
		}
		subs, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, d := range subs {
			dir := filepath.Join(root, d.Name())
			if d.IsDir() && isCampaign(dir) {
				add(dir)
			}
		}
	}
	return out
}

func isCampaign(dir string) bool {
	st, err := os.Stat(campaigndir.RunInfo(dir))
	return err == nil && st.Mode().IsRegular()
}

// lookup finds a campaign by id.
func (s *Server) lookup(id string) (entry, bool) {
	for _, e := range s.campaigns() {
		if e.ID == id {
			return e, true
		}
	}
	return entry{}, false
}

// row is one line of the campaigns list.
type row struct {
	ID, Campaign, Status, Verdict, Note string
	Created, Started                    time.Time
	Seconds                             float64
	Counts                              map[string]int
}

// summarize reads what the list shows of a campaign from run.json, events.jsonl and
// verdict.json: cheap enough for a folder of many campaigns (no plan is compiled).
func summarize(e entry) row {
	r := row{ID: e.ID, Status: "unreadable"}
	info, err := campaigndir.ReadInfo(e.Dir)
	if err != nil {
		r.Note = err.Error()
		return r
	}
	r.Campaign, r.Created = info.Campaign, info.Created
	evs, err := events.Read(campaigndir.Events(e.Dir))
	if err != nil {
		r.Note = err.Error()
		return r
	}
	r.Status = "never ran"
	for _, ev := range evs {
		switch ev.Type {
		case events.RunStart:
			r.Started, r.Status, r.Seconds, r.Counts = ev.Time, "crashed", 0, nil
		case events.RunEnd:
			r.Status, r.Seconds, r.Counts = ev.Status, ev.Seconds, ev.Counts
		}
	}
	if r.Status == "crashed" && workspace.Locked(e.Dir) {
		r.Status = "running"
	}
	if r.Status == "running" && !r.Started.IsZero() {
		r.Seconds = time.Since(r.Started).Seconds()
	}
	var v schema.Verdict
	if found, err := campaigndir.ReadJSON(e.Dir, campaigndir.Verdict(), &v); err != nil {
		r.Verdict = "unreadable"
	} else if found {
		r.Verdict = v.Verdict
	}
	if r.Verdict == "" {
		r.Verdict = outcomeWord(r.Counts)
	}
	return r
}

// outcomeWord is a run's verdict when no baseline judged it: what its run_end counted.
func outcomeWord(counts map[string]int) string {
	switch {
	case counts == nil:
		return "-"
	case counts[run.OutGateFailed] > 0:
		return "gate failed"
	case counts[run.OutFailed] > 0:
		return "failed"
	case counts[run.OutInterrupted] > 0 || counts[run.OutPending] > 0:
		return "unfinished"
	}
	return "ok"
}

// list is the campaigns page.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	var rows []row
	for _, e := range s.campaigns() {
		rows = append(rows, summarize(e))
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Created.After(rows[j].Created) })
	s.render(w, "list.html", map[string]any{"Title": "campaigns", "Rows": rows, "Roots": s.opts.Roots})
}

// open finds the campaign of a request, answering 404 itself when there is none.
func (s *Server) open(w http.ResponseWriter, r *http.Request) (entry, bool) {
	e, ok := s.lookup(r.PathValue("id"))
	if !ok {
		s.fail(w, http.StatusNotFound, fmt.Errorf("no served campaign is called %q", r.PathValue("id")))
	}
	return e, ok
}

var errNotServed = errors.New("not a file this server offers")
