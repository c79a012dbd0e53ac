package argo

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/redact"
)

// Credentials refuses a campaign file (Options.Source) holding a credential outside its
// comments: a URL's userinfo password, an api_key= or token= query, a DSN's password=, an
// Authorization header. The manifest ships the file to the pods and everything perfdag
// prints is redacted, so the pods would get the credential masked and send "xxxxx" — a
// workflow that fails, or worse, measures a server's 401s. Each problem names the key holding
// the credential and says how the exported tasks get it instead: a variable from the Secret.
func Credentials(c *load.Campaign, o Options) error {
	o.defaults()
	src := string(o.Source)
	masked := maskedAt(src)
	if len(masked) == 0 {
		return nil
	}
	toks := lexer.Tokenize(src)
	comment := map[int]int{} // line → column of the comment starting on it
	for _, tk := range toks {
		if tk.Type == token.CommentType && tk.Position != nil {
			if col, ok := comment[tk.Position.Line]; !ok || tk.Position.Column < col {
				comment[tk.Position.Line] = tk.Position.Column
			}
		}
	}
	f, err := parser.Parse(toks, 0)
	if err != nil {
		return fmt.Errorf("export: read %s for credentials: %w", c.File, err)
	}
	var keys []keyAt
	for _, doc := range f.Docs {
		collectKeys(doc.Body, "", &keys)
	}
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].pos.before(keys[j].pos) })
	var l diag.List
	done := map[int]bool{}
	for _, m := range masked {
		if col, ok := comment[m.line]; ok && m.col >= col {
			continue // a comment: masking it changes nothing the pods do
		}
		i := sort.Search(len(keys), func(i int) bool { return m.before(keys[i].pos) }) - 1
		at := keyAt{pos: m}
		if i >= 0 {
			at = keys[i]
		}
		if done[i] {
			continue
		}
		done[i] = true
		label := at.path
		if label == "" {
			label = "the file"
		}
		l.Add(c.File, at.pos.line, at.pos.col, credentialHint(c, at.path, o.Secret),
			"%s holds a credential: export argo ships this file to the pods with every credential masked (%s), so the workflow would send a wrong one",
			label, redact.Mask)
	}
	return l.Err()
}

// credentialHint says how the exported tasks get the credential at path instead.
func credentialHint(c *load.Campaign, path, secret string) string {
	last := path[strings.LastIndexAny(path, ".[")+1:]
	create := func(name string) string {
		return fmt.Sprintf("kubectl create secret generic %s --from-literal=%s=... (--secret names another Secret)", secret, name)
	}
	if step, ok := stepAt(c, path); ok {
		var params []string
		if step.Kind.SecretEnv != nil {
			for p := range step.Kind.SecretEnv(step.Params) {
				params = append(params, "with."+p)
			}
		}
		sort.Strings(params)
		if len(params) == 0 {
			return fmt.Sprintf("kind %s reads no credential from the environment, so the exported workflow cannot pass it one: "+
				"reach the service without a credential from the pods, or run this campaign with 'perfdag run'", step.Kind.Name)
		}
		return fmt.Sprintf("take the credential out of with: and set %s to the name of an environment variable holding it; "+
			"every exported task reads that variable from the Secret's key of the same name: %s", strings.Join(params, " or "), create("NAME"))
	}
	switch {
	case last == "lake":
		return fmt.Sprintf("write the DSN without its password (postgres://USER@HOST:5432/DB); every exported task reads %s from the Secret: %s",
			LakePasswordEnv, create(LakePasswordEnv))
	case last == "metrics_url" || last == "dcgm_url":
		return "perfdag scrapes " + last + " with no credential but one written in the URL, and the exported workflow cannot pass that: " +
			"point it at an address the pods reach without one (the server's in-cluster Service), or run this campaign with 'perfdag run'"
	case last == "url":
		name := "INFERENCE_API_KEY"
		if parts := strings.Split(path, "."); len(parts) == 3 && parts[0] == "endpoints" {
			if ep, ok := c.Spec.Endpoints[parts[1]]; ok && ep.APIKeyEnv != "" {
				name = ep.APIKeyEnv
			}
		}
		return fmt.Sprintf("take the key out of the URL and set api_key_env: %s on the endpoint (perfdag sends it in the Authorization header); "+
			"every exported task reads %s from the Secret: %s", name, name, create(name))
	}
	return fmt.Sprintf("the exported tasks get credentials only as environment variables from the Secret %s (api_key_env, %s for a PostgreSQL lake, "+
		"a step's *_env parameter): move the credential there, or run this campaign with 'perfdag run'", secret, LakePasswordEnv)
}

// stepAt finds the pipeline step whose with: holds path (pipeline[2].with.url).
func stepAt(c *load.Campaign, path string) (*load.Step, bool) {
	rest, ok := strings.CutPrefix(path, "pipeline[")
	if !ok {
		return nil, false
	}
	idx, rest, ok := strings.Cut(rest, "]")
	if !ok || !strings.HasPrefix(rest, ".with.") {
		return nil, false
	}
	i, err := strconv.Atoi(idx)
	if err != nil {
		return nil, false
	}
	for _, s := range c.Steps {
		if s.Index == i && s.Kind.Name != "" {
			return s, true
		}
	}
	return nil, false
}

// position is a 1-based line and column (in characters, as the YAML lexer counts them).
type position struct{ line, col int }

func (p position) before(q position) bool {
	return p.line < q.line || p.line == q.line && p.col < q.col
}

// keyAt is a mapping key of the file: where it is and its path (endpoints.main.url).
type keyAt struct {
	pos  position
	path string
}

// maskedAt lists the positions of the characters redaction masks in src: redact.Line masks
// each secret with as many characters as it has, so the two texts align character by character.
func maskedAt(src string) []position {
	red := redact.Line(src)
	if red == src {
		return nil
	}
	a, b := []rune(src), []rune(red)
	var out []position
	p := position{line: 1, col: 1}
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			out = append(out, p)
		}
		if a[i] == '\n' {
			p = position{line: p.line + 1, col: 1}
		} else {
			p.col++
		}
	}
	return out
}

// collectKeys appends every mapping key under n with its path, the loader's form
// (endpoints.main.url, pipeline[3].with.url).
func collectKeys(n ast.Node, path string, out *[]keyAt) {
	switch v := n.(type) {
	case *ast.MappingNode:
		for _, kv := range v.Values {
			collectKeys(kv, path, out)
		}
	case *ast.MappingValueNode:
		child := v.Key.GetToken().Value
		if path != "" {
			child = path + "." + child
		}
		if tk := v.Key.GetToken(); tk != nil && tk.Position != nil {
			*out = append(*out, keyAt{pos: position{tk.Position.Line, tk.Position.Column}, path: child})
		}
		collectKeys(v.Value, child, out)
	case *ast.SequenceNode:
		for i, item := range v.Values {
			collectKeys(item, path+"["+strconv.Itoa(i)+"]", out)
		}
	case *ast.TagNode:
		collectKeys(v.Value, path, out)
	case *ast.AnchorNode:
		collectKeys(v.Value, path, out)
	}
}
