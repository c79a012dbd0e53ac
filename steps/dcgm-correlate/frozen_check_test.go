package dcgmcorrelate_test

import (
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/testkit/stepstest"
)

func TestFrozenFileMustStayInTheCampaignTree(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"../captures/{cell}.yaml", "step dcgm: file ../captures/{cell}.yaml lies outside the campaign file's directory"},
		{"/etc/dcgm.yaml", "step dcgm: file /etc/dcgm.yaml lies outside the campaign file's directory"},
	} {
		d := stepstest.OneProblem(t, campaign("", `, with: {source: frozen, file: "`+tc.file+`"}`))
		if d.Line != 10 || !strings.Contains(d.Message, tc.want) || !strings.Contains(d.Hint, "allow_outside_campaign: true") {
			t.Errorf("%s: got %s (hint %q)", tc.file, d.Error(), d.Hint)
		}
		if err := stepstest.Validate(t, campaign("", `, with: {source: frozen, file: "`+tc.file+`", allow_outside_campaign: true}`)); err != nil {
			t.Errorf("%s with allow_outside_campaign: %v", tc.file, err)
		}
	}
}
