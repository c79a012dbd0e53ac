package webui

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
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
// hold a run.json are (a symlinked sub-directory is not followed).
func (s *Server) campaigns() []entry {
	var dirs []string
	for _, root := range s.opts.Roots {
		if isCampaign(root) {
			dirs = append(dirs, root)
			continue
		}
		subs, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, d := range subs {
			dir := filepath.Join(root, d.Name())
			if d.IsDir() && isCampaign(dir) {
				dirs = append(dirs, dir)
			}
		}
	}
	return withIDs(dirs)
}

// withIDs names each directory. An id is the directory's name when no other served directory
// has that name; when several do, each is the name, "~" and the start of the SHA-256 of its
// absolute path — longer when that still meets another id. An id so depends on the directory
// and the names served beside it, never on listing order: unique, and the same on every read
// while the same campaigns are served.
func withIDs(given []string) []entry {
	var dirs, names []string
	seen := map[string]bool{}
	count := map[string]int{}
	for _, d := range given {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs // "." and ".." are no names; the hash is of one spelling of the path
		}
		if seen[d] {
			continue // the same directory given twice is served once
		}
		seen[d] = true
		dirs, names = append(dirs, d), append(names, filepath.Base(d))
		count[filepath.Base(d)]++
	}
	taken := map[string]bool{}
	for _, n := range names {
		if count[n] == 1 {
			taken[n] = true
		}
	}
	out := make([]entry, 0, len(dirs))
	for i, d := range dirs {
		id := names[i]
		if count[id] > 1 {
			sum := sha256.Sum256([]byte(d))
			h := hex.EncodeToString(sum[:])
			for _, n := range []int{8, 16, len(h)} {
				if id = names[i] + "~" + h[:n]; !taken[id] {
					break
				}
			}
			taken[id] = true
		}
		out = append(out, entry{ID: id, Dir: d})
	}
	return out
}

// isCampaign says whether dir holds a run.json that is a regular file (not a symlink).
func isCampaign(dir string) bool {
	st, err := os.Lstat(campaigndir.RunInfo(dir))
	return err == nil && st.Mode().IsRegular()
}

// checkFiles refuses a campaign directory whose engine files — those read to show its status —
// are not regular files: a symlink (which could point out of the directory), a FIFO (reading
// it would hang the page) or a device such as /dev/zero (it never ends). Checked before
// anything of the directory is read; every file served is also opened through openServed.
func checkFiles(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer root.Close()
	rels := []string{campaigndir.RunInfo(""), campaigndir.Config(""), campaigndir.Events(""), campaigndir.Journal(""),
		campaigndir.Lock(""), campaigndir.FreezeLock("")}
	if subs, err := os.ReadDir(campaigndir.SlicesDir(dir)); err == nil {
		for _, d := range subs {
			rels = append(rels, filepath.Join(campaigndir.SlicesDir(""), d.Name()))
		}
	}
	for _, rel := range rels {
		st, err := root.Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is %w", filepath.ToSlash(rel), errNotRegular)
		}
	}
	return nil
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
	// Where is the directory with its parent's name (folder/name): which of two campaigns
	// with the same name an id is, on hover.
	Where            string
	Created, Started time.Time
	Seconds          float64
	Counts           map[string]int
}

// summarize reads what the list shows of a campaign from run.json, events.jsonl and
// verdict.json: cheap enough for a folder of many campaigns (no plan is compiled). Each is
// read as a served file is (openServed: inside the directory, regular, not a symlink).
func summarize(e entry) row {
	r := row{ID: e.ID, Status: "unreadable", Where: filepath.Join(filepath.Base(filepath.Dir(e.Dir)), filepath.Base(e.Dir))}
	b, err := readServed(e.Dir, filepath.Base(campaigndir.RunInfo(e.Dir)), "")
	var info campaigndir.Info
	if err == nil {
		err = json.Unmarshal(b, &info)
	}
	if err != nil {
		r.Note = err.Error()
		return r
	}
	r.Campaign, r.Created = info.Campaign, info.Created
	if err := checkFiles(e.Dir); err != nil {
		r.Note = err.Error()
		return r
	}
	r.Status = "never ran"
	if err := eachEvent(e.Dir, func(ev events.Event) {
		switch ev.Type {
		case events.RunStart:
			r.Started, r.Status, r.Seconds, r.Counts = ev.Time, "crashed", 0, nil
		case events.RunEnd:
			r.Status, r.Seconds, r.Counts = ev.Status, ev.Seconds, ev.Counts
		}
	}); err != nil {
		r.Status, r.Note = "unreadable", err.Error()
		return r
	}
	if r.Status == "crashed" && workspace.Locked(e.Dir) {
		r.Status = "running"
	}
	if r.Status == "running" && !r.Started.IsZero() {
		r.Seconds = time.Since(r.Started).Seconds()
	}
	var v schema.Verdict
	b, err = readServed(e.Dir, campaigndir.Verdict(), "")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil || campaigndir.DecodeStrict(campaigndir.Verdict(), b, &v) != nil:
		r.Verdict = "unreadable"
	default:
		r.Verdict = v.Verdict
	}
	if r.Verdict == "" {
		r.Verdict = outcomeWord(r.Counts)
	}
	return r
}

// eachEvent calls fn with each whole event of dir's events.jsonl (none when there is none),
// read through openServed a bounded piece at a time.
func eachEvent(dir string, fn func(events.Event)) error {
	f, err := openServed(dir, filepath.Base(campaigndir.Events(dir)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	for from := int64(0); ; {
		evs, next, err := events.ReadFileFrom(f, from)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			fn(ev)
		}
		if next == from {
			return nil
		}
		from = next
	}
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
	s.render(w, "list.html", map[string]any{"Title": "campaigns", "Rows": rows, "Roots": s.opts.Roots, "Histories": s.histories()})
}

// open finds the campaign of a request, answering 404 itself when there is none.
func (s *Server) open(w http.ResponseWriter, r *http.Request) (entry, bool) {
	e, ok := s.lookup(r.PathValue("id"))
	if !ok {
		s.fail(w, http.StatusNotFound, fmt.Errorf("no served campaign is called %q", r.PathValue("id")))
		return e, false
	}
	if err := checkFiles(e.Dir); err != nil {
		s.fail(w, http.StatusConflict, fmt.Errorf("campaign %s: %w", e.ID, err))
		return e, false
	}
	return e, true
}

var errNotServed = errors.New("not a file this server offers")
