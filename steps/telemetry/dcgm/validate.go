package dcgm

import (
	"fmt"
	"strings"

	"github.com/perfdag/perfdag/schema"
)

// unitKind groups the DCGM fields by the unit the file must state for them.
type unitKind int

const (
	kindRatio unitKind = iota
	kindBandwidth
	kindPower
)

// slotKeys are the YAML keys of the DCGMFields slots, in slot order.
var slotKeys = [numSlots]string{
	"sm_active", "sm_occupancy", "tensor_active", "dram_active", "gr_engine_active",
	"nvlink_tx_bytes_s", "nvlink_rx_bytes_s", "nvlink_bytes_s",
	"pcie_tx_bytes_s", "pcie_rx_bytes_s", "pcie_bytes_s", "power_w",
}

func slotKind(s slot) unitKind {
	switch {
	case s <= slotGREngineActive:
		return kindRatio
	case s == slotPower:
		return kindPower
	}
	return kindBandwidth
}

// maxPlausibleWatts bounds one GPU's board power: the largest parts draw about 1.4 kW, so a
// larger figure is a unit mistake (mW) rather than a reading.
const maxPlausibleWatts = 5000

// otherUnits maps units people write to the factor that converts them to the canonical one,
// so the error can say exactly what to write instead.
var otherUnits = map[unitKind]map[string]string{
	kindRatio: {"%": "divide each value by 100", "percent": "divide each value by 100", "pct": "divide each value by 100", "0-100": "divide each value by 100"},
	kindBandwidth: {
		"kb/s": "multiply each value by 1e3", "mb/s": "multiply each value by 1e6", "gb/s": "multiply each value by 1e9", "tb/s": "multiply each value by 1e12",
		"kib/s": "multiply each value by 1024", "mib/s": "multiply each value by 1048576", "gib/s": "multiply each value by 1073741824",
		"bit/s": "divide each value by 8", "bps": "divide each value by 8", "gbps": "multiply each value by 1.25e8", "gbit/s": "multiply each value by 1.25e8",
	},
	kindPower: {"mw": "divide each value by 1000", "kw": "multiply each value by 1000"},
}

var canonicalUnits = map[unitKind][]string{
	kindRatio:     {"ratio", "0-1", "fraction"},
	kindBandwidth: {"bytes/s", "byte/s", "b/s"},
	kindPower:     {"w", "watt", "watts"},
}

var unitNames = map[unitKind]string{kindRatio: "ratio", kindBandwidth: "bytes/s", kindPower: "W"}

func (c *checker) check(d *schema.DCGMFrozen) {
	if d.Schema != schema.DCGMFrozenSchema {
		c.errorf("schema", "%q: write schema: %s", d.Schema, schema.DCGMFrozenSchema)
	}
	c.unit("units.ratio", kindRatio, d.Units.Ratio)
	c.unit("units.bandwidth", kindBandwidth, d.Units.Bandwidth)
	c.unit("units.power", kindPower, d.Units.Power)
	if d.PowerWattsPerGPU != nil {
		c.value("power_watts_per_gpu", kindPower, *d.PowerWattsPerGPU)
	}
	if len(d.Points) == 0 {
		c.errorf("points", "missing: list one entry per concurrency point")
	}
	seen := map[int]int{}
	for i := range d.Points {
		c.point(fmt.Sprintf("points[%d]", i), &d.Points[i], seen, i)
	}
}

// unit accepts the canonical unit (case-insensitively; "B/s" but not "b/s" for bytes) and says
// how to convert anything else.
func (c *checker) unit(path string, k unitKind, u string) {
	norm := strings.ToLower(strings.TrimSpace(u))
	switch {
	case norm == "":
		c.errorf(path, "missing: write %s", unitNames[k])
		return
	case k == kindBandwidth && strings.TrimSpace(u) == "b/s":
		c.errorf(path, "%q is bits per second: write bytes/s and divide each value by 8", u)
		return
	}
	for _, ok := range canonicalUnits[k] {
		if norm == ok {
			return
		}
	}
	if how, known := otherUnits[k][norm]; known {
		c.errorf(path, "%q is not accepted: write %s and %s", u, unitNames[k], how)
		return
	}
	c.errorf(path, "unknown unit %q: write %s", u, unitNames[k])
}

func (c *checker) point(path string, p *schema.DCGMFrozenPoint, seen map[int]int, i int) {
	if p.Concurrency <= 0 {
		c.errorf(path+".concurrency", "missing or not positive: write the point's concurrency")
	} else if j, dup := seen[p.Concurrency]; dup && p.Load == "" {
		c.errorf(path+".concurrency", "concurrency %d already given at points[%d]", p.Concurrency, j)
	} else if p.Load == "" {
		seen[p.Concurrency] = i
	}
	if p.Load != "" {
		if l, err := schema.ParseLoad(p.Load); err != nil {
			c.errorf(path+".load", "%v", err)
		} else if l.InFlight() != p.Concurrency {
			c.errorf(path+".load", "%s keeps %d in flight and the entry's concurrency is %d", p.Load, l.InFlight(), p.Concurrency)
		}
	}
	switch {
	case (p.Start == nil) != (p.End == nil):
		c.errorf(path, "give both start and end, or neither")
	case p.Start != nil && !p.End.After(*p.Start):
		c.errorf(path+".end", "%s is not after start %s", p.End, p.Start)
	}
	if p.PowerWattsPerGPU != nil {
		c.value(path+".power_watts_per_gpu", kindPower, *p.PowerWattsPerGPU)
	}
	if len(p.GPUs) == 0 {
		c.errorf(path+".gpus", "missing: list one entry per GPU")
	}
	ids := map[int]bool{}
	for j := range p.GPUs {
		g := &p.GPUs[j]
		gp := fmt.Sprintf("%s.gpus[%d]", path, j)
		switch {
		case g.GPU == nil:
			c.errorf(gp+".gpu", "missing: write the GPU index")
		case *g.GPU < 0:
			c.errorf(gp+".gpu", "%d is not a GPU index", *g.GPU)
		case ids[*g.GPU]:
			c.errorf(gp+".gpu", "GPU %d is listed twice in this point", *g.GPU)
		default:
			ids[*g.GPU] = true
		}
		c.gpu(gp, g, p.PowerWattsPerGPU != nil)
	}
}

func (c *checker) gpu(path string, g *schema.DCGMFrozenGPU, pointPower bool) {
	switch {
	case g.Means != nil && len(g.Samples) > 0:
		c.errorf(path, "give means or samples, not both")
	case g.Means == nil && len(g.Samples) == 0:
		c.errorf(path, "missing data: give means (window means) or samples (timestamped)")
	case g.Means != nil:
		c.fields(path+".means", g.Means, pointPower)
	}
	for k := range g.Samples {
		sp := fmt.Sprintf("%s.samples[%d]", path, k)
		if g.Samples[k].T == nil {
			c.errorf(sp+".t", "missing: write the sample time (RFC 3339, e.g. 2026-05-01T10:00:00Z)")
		}
		c.fields(sp, &g.Samples[k].DCGMFields, pointPower)
	}
}

// fields checks one set of DCGM values: ranges by unit, link totals consistent, power given once.
func (c *checker) fields(path string, f *schema.DCGMFields, pointPower bool) {
	ptrs := fieldPtrs(f)
	given := false
	for s, p := range ptrs {
		if *p != nil {
			given = true
			c.value(path+"."+slotKeys[s], slotKind(slot(s)), **p)
		}
	}
	if !given {
		c.errorf(path, "no DCGM field given: write at least one of %s", strings.Join(slotKeys[:], ", "))
	}
	for _, l := range [][3]slot{{slotNVLinkTX, slotNVLinkRX, slotNVLinkTotal}, {slotPCIeTX, slotPCIeRX, slotPCIeTotal}} {
		tx, rx, total := *ptrs[l[0]] != nil, *ptrs[l[1]] != nil, *ptrs[l[2]] != nil
		switch {
		case total && (tx || rx):
			c.errorf(path+"."+slotKeys[l[2]], "give %s or %s + %s, not both", slotKeys[l[2]], slotKeys[l[0]], slotKeys[l[1]])
		case tx != rx:
			have, lack := l[0], l[1]
			if rx {
				have, lack = l[1], l[0]
			}
			c.errorf(path+"."+slotKeys[have], "given without %s: the TX+RX rate needs both (or give %s)", slotKeys[lack], slotKeys[l[2]])
		}
	}
	if pointPower && f.PowerWatts != nil {
		c.errorf(path+".power_w", "power is also given as the point's power_watts_per_gpu: keep one")
	}
}

// value checks one number against its unit's range, with the likely fix for a wrong unit.
func (c *checker) value(path string, k unitKind, v float64) {
	switch {
	case !usable(v):
		c.errorf(path, "%v is not a reading (NaN, infinite or a DCGM blank): leave the field out", v)
	case v < 0:
		c.errorf(path, "%v is negative", v)
	case k == kindRatio && v > 1 && v <= 100:
		c.errorf(path, "%v is not a ratio 0-1: this looks like percent; write %v", v, v/100)
	case k == kindRatio && v > 1:
		c.errorf(path, "%v is not a ratio 0-1", v)
	case k == kindPower && v > maxPlausibleWatts:
		c.errorf(path, "%v W per GPU is implausible: if this is mW, write %v", v, v/1000)
	}
}
