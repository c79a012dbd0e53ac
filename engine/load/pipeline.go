package load

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/expr-lang/expr/vm"
	"github.com/goccy/go-yaml"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/schema"
)

// pipeline validates the explicit pipeline, or takes the registry's default.
func (v *validator) pipeline() {
	s := v.c.Spec
	steps := s.Pipeline
	if len(steps) == 0 {
		if v.reg.Default == nil {
			v.at("", false, "add a pipeline: list of steps", "the campaign has no pipeline and no default pipeline is registered")
			return
		}
		steps = v.reg.Default(s)
		v.c.Default = true
	}
	ids := map[string]int{}
	for i := range steps {
		ps := steps[i]
		p := fmt.Sprintf("pipeline[%d]", i)
		if !v.c.Default {
			if !Slug.MatchString(ps.ID) {
				v.at(p+".id", false, "use lower-case letters, digits, '.', '_' and '-'", "step id %q is not a valid id", ps.ID)
			}
			if j, dup := ids[ps.ID]; dup {
				v.at(p+".id", false, fmt.Sprintf("pipeline[%d] already uses it", j), "step id %q is used twice", ps.ID)
			}
		}
		ids[ps.ID] = i
		step := &Step{PipelineStep: ps, Index: i}
		k, ok := v.reg.Lookup(ps.Kind)
		if !ok {
			v.at(p+".kind", false, kindHint(ps.Kind, v.reg.Names()), "step %s: unknown kind %q", ps.ID, ps.Kind)
			v.c.Steps = append(v.c.Steps, step)
			continue
		}
		step.Kind, step.Scope = k, k.Scope
		if ps.Foreach != "" {
			step.Scope = engine.Scope(ps.Foreach)
			if step.Scope != k.Scope && !k.AnyScope {
				v.at(p+".foreach", false, fmt.Sprintf("drop foreach, or write foreach: %s", k.Scope), "step %s: kind %s runs per %s, not per %s", ps.ID, k.Name, k.Scope, ps.Foreach)
			}
		}
		v.params(step, p)
		v.c.Steps = append(v.c.Steps, step)
	}
	for i, step := range v.c.Steps {
		p := fmt.Sprintf("pipeline[%d]", i)
		v.references(step, p, ids)
		if step.PipelineStep.When != "" {
			env := v.reg.RuleEnv(s, sampleCell(s), schema.Conc(1), step.ID)
			prog, err := gate.Compile(step.PipelineStep.When, env, false)
			if err != nil {
				v.ruleAt(p+".when", err, env)
			}
			step.Cond = prog
		}
	}
	v.fanouts()
}

// fanouts refuses a cell whose points are decided at run time when no step of the pipeline
// can decide them: it would measure nothing.
func (v *validator) fanouts() {
	kind := ""
	for _, step := range v.c.Steps {
		if step.Kind.Fanout != nil {
			return
		}
	}
	for _, name := range v.reg.Names() {
		if k, _ := v.reg.Lookup(name); k.Fanout != nil {
			kind = name
		}
	}
	for i := range v.c.Spec.Cells {
		cell := &v.c.Spec.Cells[i]
		if v.reg.ExpandsCell(cell) {
			v.at(fmt.Sprintf("cells[%d]", i), false, fmt.Sprintf("add a step of kind %s to the pipeline (needs: what run-shape needs), and list it in the needs of aggregate", kind),
				"cell %s decides its points at run time (search or stop_when), but the pipeline has no step that does", cell.ID)
		}
	}
}

func kindHint(kind string, names []string) string {
	if h := diag.DidYouMean(kind, names); h != "" {
		return h
	}
	return "known kinds: " + strings.Join(names, ", ")
}

// params decodes `with:` strictly into the kind's parameter type and runs the kind's Check.
func (v *validator) params(step *Step, p string) {
	withPath := p + ".with"
	problems := len(*v.d.diags) // a with: that failed to decode is not checked further
	if step.Kind.Params == nil {
		if len(step.With) > 0 {
			v.at(withPath, true, "remove with:", "step %s: kind %s takes no parameters", step.ID, step.Kind.Name)
		}
	} else {
		params := step.Kind.Params()
		if node, ok := v.d.nodes[withPath]; ok && !v.c.Default {
			v.d.decode(node, reflect.ValueOf(params).Elem(), withPath)
		} else if len(step.With) > 0 {
			// default pipelines carry `with:` as values, not source: decode through the same path
			sub := newDecoder(v.d.file, v.d.diags)
			if n, err := yaml.ValueToNode(step.With); err == nil {
				sub.decode(n, reflect.ValueOf(params).Elem(), withPath)
			}
		}
		if len(*v.d.diags) == problems {
			v.tags(reflect.ValueOf(params).Elem(), withPath)
		}
		step.Params = params
	}
	if step.Kind.Check != nil && len(*v.d.diags) == problems {
		for _, err := range step.Kind.Check(v.c.Spec, &step.PipelineStep, step.Params) {
			v.fieldError(err, p)
		}
	}
}

func (v *validator) references(step *Step, p string, ids map[string]int) {
	all := make([]string, 0, len(ids))
	for id := range ids {
		all = append(all, id)
	}
	slices.Sort(all)
	for j, need := range step.Needs {
		np := fmt.Sprintf("%s.needs[%d]", p, j)
		if need == step.ID {
			v.at(np, false, "", "step %s needs itself", step.ID)
			continue
		}
		if _, ok := ids[need]; !ok {
			v.at(np, false, diag.DidYouMean(need, all), "step %s needs %q, which is not a step of the pipeline", step.ID, need)
		}
	}
	if step.Brackets == "" {
		return
	}
	bp := p + ".brackets"
	j, ok := ids[step.Brackets]
	switch {
	case step.Brackets == step.ID:
		v.at(bp, false, "", "step %s brackets itself", step.ID)
	case !ok:
		v.at(bp, false, diag.DidYouMean(step.Brackets, all), "step %s brackets %q, which is not a step of the pipeline", step.ID, step.Brackets)
	case v.c.Steps[j].Scope != step.Scope:
		v.at(bp, false, "a bracketing step runs per point around a per-point step", "step %s (per %s) cannot bracket %s (per %s)", step.ID, step.Scope, step.Brackets, v.c.Steps[j].Scope)
	case slices.Contains(step.Needs, step.Brackets):
		v.at(bp, false, "drop it from needs: brackets already orders the two", "step %s both needs and brackets %s", step.ID, step.Brackets)
	}
}

// gates compiles every gate against the typed result of each step it guards.
func (v *validator) gates() {
	s := v.c.Spec
	seen := map[string]bool{}
	for i, g := range s.Gates {
		p := fmt.Sprintf("gates[%d]", i)
		switch {
		case g.ID == "":
			if v.missing(p, "id") {
				v.at(p, false, "", "gate %d has no id", i+1)
			}
		case seen[g.ID]:
			v.at(p+".id", false, "", "gate id %q is used twice", g.ID)
		}
		seen[g.ID] = true
		if g.Severity == "" {
			g.Severity = gate.Fail
		}
		cg := &Gate{Gate: g, Program: map[string]*vm.Program{}}
		var names []string
		for _, st := range v.c.Steps {
			names = append(names, st.ID, st.Kind.Name)
			if st.ID == g.On || st.Kind.Name == g.On {
				cg.Targets = append(cg.Targets, st.ID)
			}
		}
		if len(cg.Targets) == 0 {
			v.at(p+".on", false, diag.DidYouMean(g.On, names), "gate %s is on %q, which is no step id or kind of the pipeline", g.ID, g.On)
			continue
		}
		if strings.TrimSpace(g.Rule) == "" {
			if !v.missing(p, "rule") {
				continue
			}
			v.at(p, false, "rule: num_prompts >= 2 * concurrency", "gate %s has no rule", g.ID)
			continue
		}
		for _, target := range cg.Targets {
			st := v.step(target)
			env := gate.SampleEnv(v.reg.RuleEnv(s, sampleCell(s), schema.Conc(1), st.ID), st.Kind.Result)
			prog, err := gate.Compile(g.Rule, env, st.Kind.Result == nil)
			if err != nil {
				v.ruleAt(p+".rule", err, env)
				break
			}
			cg.Program[target] = prog
		}
		v.c.Gates = append(v.c.Gates, cg)
	}
}

func (v *validator) step(id string) *Step {
	for _, st := range v.c.Steps {
		if st.ID == id {
			return st
		}
	}
	return nil
}

// sampleCell gives rules typed cell fields at compile time.
func sampleCell(s *schema.Campaign) *schema.Cell {
	if len(s.Cells) > 0 {
		return &s.Cells[0]
	}
	return &schema.Cell{}
}
