package load

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/engine/schedule"
	"github.com/perfdag/perfdag/schema"
)

// Slug is the shape of campaign slugs, cell ids and step ids: safe as one path element.
var Slug = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

type validator struct {
	d   *decoder
	c   *Campaign
	reg *engine.Registry
}

// at reports a problem at a decoder path (the value; the key when keyPos), falling back to the
// nearest enclosing path that has a node.
func (v *validator) at(path string, keyPos bool, hint, format string, args ...any) {
	if v.bad(path) {
		return // already reported where it (or what holds it) failed to decode, or misspelt
	}
	n := v.node(path, keyPos)
	if v.d.badNode[n] {
		return
	}
	v.d.errorf(n, hint, format, args...)
}

// missing reports whether a required key absent from the mapping at path may be reported: not
// when the mapping failed to decode, nor when it holds an unknown key (a misspelling of the
// missing one is the one mistake, already reported).
func (v *validator) missing(path, key string) bool {
	return !v.bad(join(path, key)) && !v.d.unknown[path]
}

// bad reports whether path or a path holding it failed to decode: a check there would only
// repeat that mistake as a second, cascaded problem.
func (v *validator) bad(path string) bool {
	for p := path; ; p = parent(p) {
		if v.d.bad[p] {
			return true
		}
		if p == "" {
			return false
		}
	}
}

func (v *validator) node(path string, keyPos bool) ast.Node {
	for p := path; ; {
		if keyPos {
			if n, ok := v.d.keys[p]; ok {
				return n
			}
		}
		if n, ok := v.d.nodes[p]; ok && n != nil {
			return n
		}
		if p == "" {
			return nil
		}
		p = parent(p)
	}
}

func parent(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

func (v *validator) run() {
	s := v.c.Spec
	if !Slug.MatchString(s.Campaign) {
		v.at("campaign", false, "use lower-case letters, digits, '.', '_' and '-', starting with a letter or digit", "campaign slug %q is not a valid slug", s.Campaign)
	}
	if s.Kind == "" {
		s.Kind = "throughput"
	}
	v.tags(reflect.ValueOf(s).Elem(), "")
	v.endpoints()
	v.cells()
	v.schedule()
	v.pipeline()
	v.gates()
}

func (v *validator) endpoints() {
	names := make([]string, 0, len(v.c.Spec.Endpoints))
	for n := range v.c.Spec.Endpoints {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		ep := v.c.Spec.Endpoints[name]
		p := "endpoints." + name
		for _, u := range []string{ep.URL, ep.MetricsURL, ep.DCGMURL} {
			redact.URLSecrets(u) // a ${PW} expanded into userinfo is masked wherever it turns up
		}
		if !Slug.MatchString(name) {
			v.at(p, true, "use lower-case letters, digits, '.', '_' and '-'", "endpoint name %q is not a valid name", name)
		}
		u, err := url.Parse(ep.URL)
		switch {
		case ep.URL == "" && v.missing(p, "url"):
			v.at(p, true, "url: http://host:8000, or sim:// for the built-in simulator", "endpoint %s has no url", name)
		case ep.URL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "sim")):
			v.at(p+".url", false, "write http://host:port, https://host, or sim://", "endpoint %s: url %q is not an http(s):// or sim:// URL", name, ep.URL)
		}
		if ep.Model == "" && v.missing(p, "model") {
			v.at(p, true, "model: the served model name, as /v1/models lists it", "endpoint %s has no model", name)
		}
		if ep.APIKeyEnv != "" && !envName.MatchString(ep.APIKeyEnv) {
			v.at(p+".api_key_env", false, "name the environment variable that holds the key, e.g. INFERENCE_API_KEY; never the key itself", "api_key_env %q is not an environment variable name", ep.APIKeyEnv)
		}
		switch {
		case ep.TokenBasis == schema.TokenBasisTokenizer && ep.Tokenizer == "":
			v.at(p+".token_basis", false, "tokenizer: path/to/tokenizer.json (a Hugging Face tokenizer file, relative to this file)", "endpoint %s: token_basis tokenizer needs the tokenizer file it counts with", name)
		case ep.Tokenizer != "" && ep.TokenBasis != "" && ep.TokenBasis != schema.TokenBasisTokenizer:
			v.at(p+".tokenizer", false, "drop tokenizer:, or set token_basis: tokenizer", "endpoint %s: tokenizer is only read on the tokenizer basis (token_basis is %s)", name, ep.TokenBasis)
		}
	}
	if v.reg != nil && v.reg.Files != nil {
		for _, err := range v.reg.Files(v.c.Spec, v.c.BaseDir) {
			v.fieldError(err, "endpoints")
		}
	}
}

func (v *validator) cells() {
	s := v.c.Spec
	seen := map[string]int{}
	for i := range s.Cells {
		cell := &s.Cells[i]
		p := fmt.Sprintf("cells[%d]", i)
		switch {
		case cell.ID == "" && v.missing(p, "id"):
			v.at(p, false, "give every cell an id such as aa-1k", "cell %d has no id", i+1)
		case cell.ID != "" && !Slug.MatchString(cell.ID):
			v.at(p+".id", false, "use lower-case letters, digits, '.', '_' and '-'; an id is never a path", "cell id %q is not a valid id", cell.ID)
		}
		if j, dup := seen[cell.ID]; dup && cell.ID != "" {
			v.at(p+".id", false, fmt.Sprintf("cells[%d] already uses it", j), "cell id %q is used twice", cell.ID)
		}
		seen[cell.ID] = i
		v.cellEndpoint(cell, p)
		if len(cell.Concurrencies) == 0 && len(cell.Rates) == 0 && cell.Search == nil && cell.Sweep.IsZero() && v.missing(p, "concurrencies") && !v.bad(p+".sweep") {
			v.at(p, false, "concurrencies: [1, 8, 32] (closed loop), rates: [0.5, 1, 2] (requests per second), or sweep: auto (found at run time)", "cell %s has no concurrencies and no rates", cell.ID)
		}
		v.loads(cell, p)
		v.requests(cell, p)
		v.slo(cell, p)
		merge(cell, s)
	}
}

func (v *validator) cellEndpoint(cell *schema.Cell, p string) {
	if v.bad("endpoints") {
		return // the endpoints block itself is wrong: saying each cell lacks one would cascade
	}
	eps := v.c.Spec.Endpoints
	if cell.Endpoint == "" {
		if len(eps) != 1 && cell.Import != nil {
			return // imported points were measured elsewhere: naming the endpoint is optional
		}
		if len(eps) == 1 {
			for n := range eps {
				cell.Endpoint = n
			}
			return
		}
		if len(eps) > 1 {
			v.at(p, false, "add endpoint: <name> to the cell", "cell %s must name its endpoint: the campaign has %d", cell.ID, len(eps))
		} else {
			v.at(p, false, "add an endpoints: block (sim:// runs the built-in simulator)", "cell %s has no endpoint: the campaign defines none", cell.ID)
		}
		return
	}
	if _, ok := eps[cell.Endpoint]; !ok {
		v.at(p+".endpoint", false, diag.DidYouMean(cell.Endpoint, mapKeys(eps)), "cell %s names endpoint %q, which is not defined", cell.ID, cell.Endpoint)
	}
}

// loads reports what is wrong with a cell's points (schema.Cell.LoadProblems), each at its
// key; a rate outside its range tag is reported there, once.
func (v *validator) loads(cell *schema.Cell, p string) {
	problems, hints := cell.LoadProblems()
	for _, path := range slices.Sorted(maps.Keys(problems)) {
		if strings.HasPrefix(path, "rates[") {
			var j int
			if _, err := fmt.Sscanf(path, "rates[%d]", &j); err == nil && j < len(cell.Rates) && (cell.Rates[j] < 0 || cell.Rates[j] > schema.MaxRate) {
				continue
			}
		}
		v.at(p+"."+path, false, hints[path], "%s", problems[path])
	}
}

// merge fills a cell's unset identity fields as the schema defines inheritance.
func merge(cell *schema.Cell, s *schema.Campaign) {
	cell.Inherit(s.Defaults, s.Endpoints[cell.Endpoint].Model)
}

func (v *validator) schedule() {
	sc := v.c.Spec.Schedule
	if sc == nil {
		return
	}
	if sc.Timezone != "" {
		if _, err := time.LoadLocation(sc.Timezone); err != nil {
			v.at("schedule.timezone", false, "an IANA zone such as Europe/Berlin or UTC", "schedule.timezone %q is not a known time zone", sc.Timezone)
			return
		}
	}
	if _, _, err := schedule.ParseCron(sc.Cron, sc.Timezone, time.Now()); err != nil {
		v.at("schedule.cron", false, "five fields: minute hour day-of-month month day-of-week, e.g. \"0 3 * * 1\"; the zone in timezone:", "schedule.cron %q: %v", sc.Cron, err)
	}
	if sc.OnRed != nil && len(sc.OnRed.Command) == 0 {
		v.at("schedule.on_red", false, "command: [program, arg, ...]", "schedule.on_red has no command")
	}
}

func mapKeys[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ruleAt reports an expr error inside a rule string at its position in the YAML file.
func (v *validator) ruleAt(path string, err error, env map[string]any) {
	msg, line, col, hint := gate.Explain(err, env)
	n := v.node(path, false)
	l, c := pos(n)
	if tk := tokenOf(n); tk != nil && line > 0 {
		switch tk.Type {
		case token.DoubleQuoteType, token.SingleQuoteType:
			if line == 1 {
				c += col // col is 1-based, +1 quote −1 base
			}
		case token.LiteralType, token.FoldedType:
			l, c = l+line, c+col-1
		default:
			if line == 1 {
				c += col - 1
			} else {
				l += line - 1
			}
		}
	}
	v.d.diags.Add(v.d.file, l, c, hint, "%s: %s", path, msg)
}

func tokenOf(n ast.Node) *token.Token {
	if n == nil {
		return nil
	}
	return n.GetToken()
}

// fieldError places a Kind.Check error: at its path when it is a FieldError, else at fallback.
func (v *validator) fieldError(err error, fallback string) {
	var fe *engine.FieldError
	if errors.As(err, &fe) {
		v.at(fe.Path, false, fe.Hint, "%s", err.Error())
		return
	}
	v.at(fallback, false, "", "%s", err.Error())
}
