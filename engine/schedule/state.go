package schedule

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/perfdag/perfdag/engine/checkpoint"
)

// StateSchema names the per-campaign state file.
const StateSchema = "schedule_state_v1"

// State is <state-dir>/<campaign>.json: the watermark that keeps a slot from running twice
// across restarts, and what was waiting or running when the scheduler stopped.
type State struct {
	Schema      string `json:"schema"`
	Campaign    string `json:"campaign"`
	File        string `json:"file"`
	Fingerprint string `json:"fingerprint"` // of cron + zone; a change resets the watermark
	// Watermark: every slot at or before it has been decided (run, queued, skipped, dropped).
	Watermark time.Time    `json:"watermark"`
	Pending   []Slot       `json:"pending,omitempty"` // accepted slots not started yet
	Running   *RunningSlot `json:"running,omitempty"` // the slot running when this was written
	LastRun   *Run         `json:"last_run,omitempty"`
	Updated   time.Time    `json:"updated"`
}

// RunningSlot is written, atomically, before a slot's run starts: a scheduler killed during
// the run leaves it behind, and the next start records that run as failed instead of losing it.
type RunningSlot struct {
	Slot
	PID     int       `json:"pid"`           // of the scheduler that ran it
	Started time.Time `json:"started"`       // when the run started
	Dir     string    `json:"dir,omitempty"` // its campaign directory, once the Runner reported it
}

// StatePath is where a campaign's state lives in a state directory.
func StatePath(stateDir, campaign string) string {
	return filepath.Join(stateDir, campaign+".json")
}

// ReadState reads a campaign's state; found is false when the campaign never ran here.
func ReadState(stateDir, campaign string) (st State, found bool, err error) {
	path := StatePath(stateDir, campaign)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, false, nil
	}
	if err != nil {
		return State{}, false, fmt.Errorf("read schedule state: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return State{}, false, fmt.Errorf("decode %s: %w (delete it to start the campaign's schedule afresh)", path, err)
	}
	if st.Schema != StateSchema {
		return State{}, false, fmt.Errorf("%s: schema %q, want %s", path, st.Schema, StateSchema)
	}
	return st, true, nil
}

// writeState replaces the state file atomically (temp file, fsync, rename).
func writeState(stateDir string, st *State) error {
	st.Schema = StateSchema
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode schedule state of %s: %w", st.Campaign, err)
	}
	return checkpoint.WriteFile(StatePath(stateDir, st.Campaign), append(b, '\n'))
}
