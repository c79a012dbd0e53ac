package webui

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/perfdag/perfdag/schema/campaigndir"
)

// hub shares one inotify watcher among every live stream: a directory is watched while some
// page follows it, and each write to its events.jsonl wakes that directory's streams. Nothing
// polls; a stream reads the log only when the kernel says it changed. The directory's parent
// is watched too: a campaign directory removed and written again (a re-run into the same
// --out) is a new directory, which the hub watches again as it appears, waking its streams.
type hub struct {
	w      *fsnotify.Watcher
	mu     sync.Mutex
	subs   map[string]map[chan struct{}]struct{} // events.jsonl path → wake-ups
	refs   map[string]int                        // watched path → how many followed directories need it
	done   chan struct{}
	closed bool
}

func newHub() (*hub, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch campaign directories: %w", err)
	}
	h := &hub{w: w, subs: map[string]map[chan struct{}]struct{}{}, refs: map[string]int{}, done: make(chan struct{})}
	go h.loop()
	return h, nil
}

// loop wakes the streams of the events.jsonl a notification names, or of the directory it
// names (created, removed or renamed in its parent): a created one is watched again first. A
// wake-up is a one-slot channel: many writes before a stream reads coalesce into one read.
func (h *hub) loop() {
	for {
		select {
		case ev, ok := <-h.w.Events:
			if !ok {
				return
			}
			h.mu.Lock()
			subs := h.subs[ev.Name]
			if dirSubs := h.subs[campaigndir.Events(ev.Name)]; len(dirSubs) > 0 {
				if ev.Has(fsnotify.Create) && !h.closed {
					_ = h.w.Add(ev.Name) // the directory is back: follow the new one
				}
				subs = dirSubs
			}
			for ch := range subs {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
			h.mu.Unlock()
		case _, ok := <-h.w.Errors:
			if !ok {
				return
			}
			h.mu.Lock() // events may have been lost (a queue overflow): every stream reads again
			for _, subs := range h.subs {
				for ch := range subs {
					select {
					case ch <- struct{}{}:
					default:
					}
				}
			}
			h.mu.Unlock()
		case <-h.done:
			return
		}
	}
}

// subscribe wakes ch on every change of dir's events.jsonl, and when dir is replaced, until
// cancel.
func (h *hub) subscribe(dir string) (ch chan struct{}, cancel func(), err error) {
	path := campaigndir.Events(dir)
	watched := []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))} // the directory, its parent
	ch = make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, errors.New("the server is closing")
	}
	for _, p := range watched {
		// Added again on every subscription, not only the first: a directory replaced since
		// is a new inode, and adding its path again watches the one there now. The directory,
		// not the file: the log may not exist yet, and a trimmed log is rewritten.
		if err := h.w.Add(p); err != nil {
			return nil, nil, fmt.Errorf("watch %s: %w", p, err)
		}
	}
	for _, p := range watched {
		h.refs[p]++
	}
	if h.subs[path] == nil {
		h.subs[path] = map[chan struct{}]struct{}{}
	}
	h.subs[path][ch] = struct{}{}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[path], ch)
		if len(h.subs[path]) == 0 {
			delete(h.subs, path)
		}
		for _, p := range watched {
			if h.refs[p]--; h.refs[p] == 0 {
				delete(h.refs, p)
				if !h.closed {
					_ = h.w.Remove(p)
				}
			}
		}
	}, nil
}

func (h *hub) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	close(h.done)
	return h.w.Close()
}
