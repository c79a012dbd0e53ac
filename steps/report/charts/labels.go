package charts

import "gonum.org/v1/plot/vg"

// box is an axis-aligned rectangle in canvas coordinates.
type box struct{ minX, minY, maxX, maxY vg.Length }

func (a box) overlaps(b box) bool {
	return a.minX < b.maxX && b.minX < a.maxX && a.minY < b.maxY && b.minY < a.maxY
}

func (a box) within(b box) bool {
	return a.minX >= b.minX && a.maxX <= b.maxX && a.minY >= b.minY && a.maxY <= b.maxY
}

// labelReq asks for a w×h label next to a point whose marker has radius gap.
type labelReq struct {
	at   vg.Point
	w, h vg.Length
	gap  vg.Length
}

// placement is where label index landed.
type placement struct {
	index int
	at    box
}

// candidate offsets around the point, in order of preference: the unit vector says on which side
// of the point the label sits (±1 right/left, ±1 above/below, 0 centred); far doubles the gap.
var offsets = []struct {
	dx, dy float64
	far    bool
}{
	{1, 1, false}, {-1, 1, false}, {1, -1, false}, {-1, -1, false},
	{1, 0, false}, {-1, 0, false}, {0, 1, false}, {0, -1, false},
	{1, 1, true}, {-1, 1, true}, {1, -1, true}, {-1, -1, true},
}

// placeLabels puts each label, in request order, at the first offset that stays inside bounds
// and overlaps no label placed before it, preferring offsets that cover the fewest obstacles
// (markers). A label with no free offset is skipped, so labels never overlap each other.
func placeLabels(reqs []labelReq, bounds box, obstacles []box) []placement {
	var out []placement
	for i, r := range reqs {
		best, bestHits := box{}, -1
		for _, o := range offsets {
			b := labelBox(r, o.dx, o.dy, o.far)
			if !b.within(bounds) || collides(b, out) {
				continue
			}
			hits := 0
			for _, ob := range obstacles {
				if b.overlaps(ob) {
					hits++
				}
			}
			if bestHits < 0 || hits < bestHits {
				best, bestHits = b, hits
			}
			if hits == 0 {
				break
			}
		}
		if bestHits >= 0 {
			out = append(out, placement{index: i, at: best})
		}
	}
	return out
}

func labelBox(r labelReq, dx, dy float64, far bool) box {
	g := r.gap
	if far {
		g *= 2.5
	}
	var x, y vg.Length
	switch {
	case dx > 0:
		x = r.at.X + g
	case dx < 0:
		x = r.at.X - g - r.w
	default:
		x = r.at.X - r.w/2
	}
	switch {
	case dy > 0:
		y = r.at.Y + g*0.6
	case dy < 0:
		y = r.at.Y - g*0.6 - r.h
	default:
		y = r.at.Y - r.h/2
	}
	return box{minX: x, minY: y, maxX: x + r.w, maxY: y + r.h}
}

func collides(b box, placed []placement) bool {
	for _, p := range placed {
		if b.overlaps(p.at) {
			return true
		}
	}
	return false
}
