package render

import (
	"os"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// TestReadCalibration: a campaign without calibration.json has none and no complaint; a good
// one is read; another campaign's, a malformed or foreign file is a note for the cover, never an error.
func TestReadCalibration(t *testing.T) {
	dir := t.TempDir()
	if c, msg := readCalibration(dir, "x"); c != nil || msg != "" {
		t.Errorf("no file: %v, %q", c, msg)
	}
	good := schema.Calibration{Schema: schema.SchemaCalibration, Campaign: "x", Points: []schema.CalibrationPoint{{Concurrency: 4}}}
	if _, err := campaigndir.WriteJSON(dir, campaigndir.Calibration(), good); err != nil {
		t.Fatal(err)
	}
	if c, msg := readCalibration(dir, "x"); c == nil || msg != "" || c.Points[0].Concurrency != 4 {
		t.Errorf("good file: %v, %q", c, msg)
	}
	if c, msg := readCalibration(dir, "y"); c != nil || msg != "calibration.json calibrates campaign x, not y (other prompts and concurrencies): run perfdag calibrate on this campaign's file" {
		t.Errorf("another campaign's file: %v, %q", c, msg)
	}
	for content, want := range map[string]string{
		`{"schema":"calibration_v0","points":[]}`: `schema "calibration_v0", want calibration_v1`,
		`{"schema":"calibration_v1","bogus":1}`:   `unknown field "bogus"`,
		`not json`:                                `invalid character`,
	} {
		if err := os.WriteFile(campaigndir.Abs(dir, campaigndir.Calibration()), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if c, msg := readCalibration(dir, "x"); c != nil || !strings.Contains(msg, want) {
			t.Errorf("%s: %v, %q; want a note with %q", content, c, msg, want)
		}
	}
}
