package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/perfdag/perfdag/engine/campaign"
)

// readPage reads a page of the repository by its path from the root.
func readPage(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section is the text under the heading that starts with head, up to the next heading of the
// same or a higher level ("" when there is none).
func section(page, head string) string {
	level := strings.Index(head, " ")
	lines := strings.Split(page, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, head) {
			continue
		}
		var b strings.Builder
		for _, m := range lines[i+1:] {
			if n := strings.Index(m, " "); strings.HasPrefix(m, "#") && n > 0 && n <= level && strings.Trim(m[:n], "#") == "" {
				break
			}
			b.WriteString(m + "\n")
		}
		return b.String()
	}
	return ""
}

var exitCodes = []int{campaign.CodeOK, campaign.CodeFailed, campaign.CodeUsage, campaign.CodeInvalid, campaign.CodeRefused, campaign.CodeInterrupted}

// The exit-code tables of the README and docs/commands.md list exactly the codes
// engine/campaign defines, each with a meaning.
func TestDocsExitCodes(t *testing.T) {
	row := regexp.MustCompile("(?m)^\\| `(\\d+)` \\| (.*) \\|$")
	for _, page := range []string{"README.md", "docs/commands.md"} {
		sec := section(readPage(t, page), "## Exit codes")
		if sec == "" {
			t.Errorf("%s has no '## Exit codes' section", page)
			continue
		}
		var got []int
		for _, m := range row.FindAllStringSubmatch(sec, -1) {
			c, _ := strconv.Atoi(m[1])
			got = append(got, c)
			if strings.TrimSpace(m[2]) == "" {
				t.Errorf("%s: exit code %d has no meaning", page, c)
			}
		}
		if !slices.Equal(got, exitCodes) {
			t.Errorf("%s lists exit codes %v, engine/campaign defines %v", page, got, exitCodes)
		}
	}
}

// slug is GitHub's anchor for a Markdown heading.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	codeSpan = regexp.MustCompile("`[^`\n]*`")
	mdLink   = regexp.MustCompile(`\[[^\]\n]*\]\(([^)\s]+)\)`)
	heading  = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// prose is a page without its code: fenced blocks and inline code spans.
func prose(src string) string {
	var b strings.Builder
	fenced := false
	for _, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(codeSpan.ReplaceAllString(l, "") + "\n")
		}
	}
	return b.String()
}

// Every relative link of the README and docs/ names a file or folder of the repository, and
// an anchor a heading of the page it points to.
func TestDocsLinks(t *testing.T) {
	for _, page := range docPages(t) {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(prose(string(src)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s, which does not exist", filepath.Base(page), target)
				continue
			}
			if anchor == "" {
				continue
			}
			body, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s links to %s: %v", filepath.Base(page), target, err)
				continue
			}
			var anchors []string
			for _, h := range heading.FindAllStringSubmatch(prose(strings.ReplaceAll(string(body), "`", "")), -1) {
				anchors = append(anchors, slug(h[1]))
			}
			if !slices.Contains(anchors, anchor) {
				t.Errorf("%s links to %s: no heading of %s has the anchor #%s", filepath.Base(page), target, file, anchor)
			}
		}
	}
}

// Every command and every flag of the CLI is documented in docs/commands.md, each flag under
// the heading of its command.
func TestDocsCommands(t *testing.T) {
	page := readPage(t, "docs/commands.md")
	var headings []string
	for _, h := range heading.FindAllStringSubmatch(page, -1) {
		headings = append(headings, h[0])
	}
	var walk func(c *cobra.Command, path string)
	walk = func(c *cobra.Command, path string) {
		path = strings.TrimSpace(path + " " + c.Name())
		for _, sub := range c.Commands() {
			walk(sub, path)
		}
		if !c.Runnable() {
			return
		}
		name := "perfdag " + path
		i := slices.IndexFunc(headings, func(h string) bool {
			return strings.HasPrefix(h, "### ") && regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`(\s|,|$)`).MatchString(h)
		})
		if i < 0 {
			t.Errorf("docs/commands.md has no '### %s' heading", name)
			return
		}
		sec := section(page, headings[i])
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			if !strings.Contains(sec, "--"+f.Name) {
				t.Errorf("docs/commands.md: %s does not document --%s (%s)", headings[i], f.Name, f.Usage)
			}
		})
	}
	for _, c := range testApp().commands() {
		walk(c, "")
	}
}
