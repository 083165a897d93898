// Package docs holds kubesim's documentation pages (the Markdown files
// beside this one) and the tests that keep them true to the tree: the
// architecture page names every package under internal/ and no package
// that is gone, and every relative link of README.md and these pages
// points at a file (and a heading) that exists. Standard library only, so
// `go test ./docs/` needs no Kubernetes build.
package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, seen from this package's directory.
const root = ".."

// internalPath is a package path as the architecture page names it:
// internal/snapshot/clone/ (the trailing slash says it is a directory).
var internalPath = regexp.MustCompile(`\binternal/[A-Za-z0-9_]+(?:/[A-Za-z0-9_]+)*/`)

// TestArchitectureNamesEveryInternalPackage: every directory under
// internal/ that holds Go files is named in docs/architecture.md, and every
// internal/…/ path named there is such a directory.
func TestArchitectureNamesEveryInternalPackage(t *testing.T) {
	page, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, p := range internalPath.FindAllString(string(page), -1) {
		named[strings.TrimSuffix(p, "/")] = true
	}
	packages := goPackages(t, filepath.Join(root, "internal"))
	for _, p := range packages {
		if !named[p] {
			t.Errorf("docs/architecture.md does not name %s/: add it to the layout, with what it is for", p)
		}
	}
	for p := range named {
		if !slices.Contains(packages, p) {
			t.Errorf("docs/architecture.md names %s/, which is no package under internal/: remove it or fix the path", p)
		}
	}
}

// goPackages lists the directories below dir that hold .go files, as
// slash-separated paths relative to the repository.
func goPackages(t *testing.T, dir string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != dir {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			seen[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 {
		t.Fatalf("no Go packages under %s", dir)
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// link is a Markdown inline link's target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestRelativeLinksExist: every relative link of README.md and docs/*.md
// points at a file or directory of the repository, and a #fragment at a
// heading of the Markdown file it names.
func TestRelativeLinksExist(t *testing.T) {
	for _, page := range pages(t) {
		for _, l := range links(t, page) {
			target, fragment, _ := strings.Cut(l.target, "#")
			file := page
			if target != "" {
				file = filepath.Join(filepath.Dir(page), filepath.FromSlash(target))
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s:%d: link %q: %v", rel(page), l.line, l.target, err)
					continue
				}
			}
			if fragment != "" && strings.HasSuffix(file, ".md") && !slices.Contains(anchors(t, file), fragment) {
				t.Errorf("%s:%d: link %q: %s has no heading #%s", rel(page), l.line, l.target, rel(file), fragment)
			}
		}
	}
}

// TestPagesLinkBackToREADME: each page says what it covers and links back
// to README.md near its top, so a reader who lands on it can find the rest.
func TestPagesLinkBackToREADME(t *testing.T) {
	for _, page := range pages(t)[1:] {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(data), "\n", 6)
		if !strings.HasPrefix(lines[0], "# ") {
			t.Errorf("%s: the first line is %q; want the page's title (# …)", rel(page), lines[0])
		}
		if !strings.Contains(strings.Join(lines[:min(len(lines), 5)], "\n"), "](../README.md)") {
			t.Errorf("%s: no link back to ../README.md in its first lines", rel(page))
		}
	}
}

// TestREADMEIsShort: README.md is what a newcomer reads in five minutes;
// the details belong in docs/.
func TestREADMEIsShort(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 300 {
		t.Errorf("README.md has %d lines; keep it under 300 and move details to a page in docs/", n)
	}
}

// pages are README.md, then docs/*.md.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	return append([]string{filepath.Join(root, "README.md")}, docs...)
}

type mdLink struct {
	target string
	line   int
}

// links are a Markdown file's relative links, outside fenced code blocks.
func links(t *testing.T, page string) []mdLink {
	t.Helper()
	var out []mdLink
	forEachProseLine(t, page, func(n int, line string) {
		for _, m := range link.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			out = append(out, mdLink{target: target, line: n})
		}
	})
	return out
}

// anchors are the fragments GitHub gives a Markdown file's headings.
func anchors(t *testing.T, page string) []string {
	t.Helper()
	var out []string
	forEachProseLine(t, page, func(_ int, line string) {
		if title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			out = append(out, slug(title))
		}
	})
	return out
}

// slug is GitHub's anchor for a heading: lower case, letters, digits,
// hyphens and underscores kept, spaces made hyphens, the rest dropped.
func slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(title)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// forEachProseLine calls f with each line of page outside fenced code
// blocks, numbered from 1.
func forEachProseLine(t *testing.T, page string, f func(n int, line string)) {
	t.Helper()
	file, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	fenced := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			f(n, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// rel is a path as the repository names it, for messages.
func rel(path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}
