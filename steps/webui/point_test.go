package webui

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sigDigits counts a figure's significant digits as shown.
func sigDigits(s string) int {
	s, _, _ = strings.Cut(s, "e")
	s = strings.TrimLeft(strings.TrimPrefix(s, "-"), "0.")
	return len(strings.ReplaceAll(s, ".", ""))
}

// The point page shows its figures as the campaign's points table does: four significant
// digits at most (a whole number as it is), each cell's exact value in its title.
func TestPointPageFigures(t *testing.T) {
	root := t.TempDir()
	finished(t, root, "tiny-1")
	ts := serve(t, Options{Roots: []string{root}})
	code, body := get(t, ts, "/c/tiny-1/point/aa-1k/2")
	if code != 200 {
		t.Fatalf("%d\n%s", code, body)
	}
	cell := regexp.MustCompile(`<td class="num"[^>]*>([^<]*)</td>`)
	titled := regexp.MustCompile(`title="([^"]+)"`)
	cells := cell.FindAllStringSubmatch(body, -1)
	if len(cells) < 40 {
		t.Fatalf("%d number cells on the point page", len(cells))
	}
	for _, m := range cells {
		shown := m[1]
		v, err := strconv.ParseFloat(shown, 64)
		if err != nil {
			t.Errorf("a number cell shows %q", shown)
			continue
		}
		if v != float64(int64(v)) && sigDigits(shown) > 4 {
			t.Errorf("%s: more than four significant digits", m[0])
		}
		tm := titled.FindStringSubmatch(m[0])
		if tm == nil {
			if v != float64(int64(v)) {
				t.Errorf("%s: a rounded figure without its exact value on hover", m[0])
			}
			continue
		}
		exactV, err := strconv.ParseFloat(tm[1], 64)
		if err != nil || fig(exactV) != shown {
			t.Errorf("%s: the title is not the exact value of the figure shown", m[0])
		}
	}
	if m := regexp.MustCompile(`window <span title="([^"]+)">([^<]+)</span> s`).FindStringSubmatch(body); m == nil {
		t.Errorf("the window is not a rounded figure with its exact value on hover")
	} else if sigDigits(m[2]) > 4 {
		t.Errorf("window shown as %s", m[2])
	}
}
