package layering

import (
	"bufio"
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/skillgate/skillgate"

// part is one row of the README's table of parts: its name, its place in
// the order (a part imports only its own and lower-numbered parts) and the
// package patterns in it, relative to the module: "internal/layering" is
// that package, "internal/model/..." the folder and everything below it.
type part struct {
	order    int
	name     string
	patterns []string
}

// never is one row of the README's table of rules: the parts it holds, the
// package patterns they must not import, and why.
type never struct {
	from    []string
	imports []string
	why     string
}

// only is one row of the README's table of adapters: the packages that
// alone may import the packages outside the module that imports names,
// and why.
type only struct {
	adapters []string
	imports  []string
	why      string
}

// rules are the three tables of the layout section.
type rules struct {
	parts []part
	never []never
	only  []only
}

// cells splits a Markdown table row into its trimmed cells.
func cells(line string) []string {
	cs := strings.Split(strings.Trim(line, "| "), "|")
	for i := range cs {
		cs[i] = strings.TrimSpace(cs[i])
	}
	return cs
}

// list splits a cell of comma-separated, possibly backticked, names.
func list(cell string) []string {
	var out []string
	for _, p := range strings.Split(cell, ",") {
		out = append(out, strings.Trim(strings.TrimSpace(p), "`"))
	}
	return out
}

// readRules reads the table of parts (header "| part | folder | owns |"),
// the table of rules (header "| never | imports | why |") and the table of
// adapters (header "| only | imports | why |") from the README's
// "## Layout" section.
func readRules(readme []byte) (rules, error) {
	var r rules
	in, table := false, ""
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in, table = line == "## Layout", ""
			continue
		}
		if !in {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			table = ""
			continue
		}
		cs := cells(line)
		switch {
		case len(cs) != 3:
			return rules{}, fmt.Errorf("README.md:%d: a row of %d cells in the layout section; the tables have 3", n, len(cs))
		case table == "" && cs[0] == "part":
			table = "part"
		case table == "" && cs[0] == "never":
			table = "never"
		case table == "" && cs[0] == "only":
			table = "only"
		case strings.Trim(cs[0], "-") == "":
			// the separator row
		case table == "part":
			p := part{order: len(r.parts), name: cs[0], patterns: list(cs[1])}
			if slices.Contains(p.patterns, "") {
				return rules{}, fmt.Errorf("README.md:%d: an empty package pattern in part %q", n, p.name)
			}
			r.parts = append(r.parts, p)
		case table == "never":
			nv := never{from: list(cs[0]), imports: list(cs[1]), why: cs[2]}
			for _, name := range nv.from {
				if !slices.ContainsFunc(r.parts, func(p part) bool { return p.name == name }) {
					return rules{}, fmt.Errorf("README.md:%d: rule names part %q, which the table of parts above it does not have", n, name)
				}
			}
			r.never = append(r.never, nv)
		case table == "only":
			r.only = append(r.only, only{adapters: list(cs[0]), imports: list(cs[1]), why: cs[2]})
		}
	}
	if len(r.parts) == 0 {
		return rules{}, fmt.Errorf("README.md: no table of parts (header \"| part | folder | owns |\") in the \"## Layout\" section")
	}
	return r, sc.Err()
}

// match reports how well pattern matches pkg: -1 not at all, else higher
// for a closer match (an exact pattern wins over a folder, a longer folder
// over a shorter).
func match(pattern, pkg string) int {
	if pattern == pkg {
		return 1 << 20
	}
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok && (pkg == dir || strings.HasPrefix(pkg, dir+"/")) {
		return len(dir)
	}
	return -1
}

// partOf returns the part pkg (relative to the module) is in, and the
// pattern that placed it there.
func partOf(r rules, pkg string) (p part, pattern string, ok bool) {
	best := -1
	for _, candidate := range r.parts {
		for _, pat := range candidate.patterns {
			if s := match(pat, pkg); s > best {
				best, p, pattern, ok = s, candidate, pat, true
			}
		}
	}
	return p, pattern, ok
}

// check returns one line for every package in no part, every import of a
// part below the importer's and every import a rule forbids. graph maps a
// package (relative to the module) to its imports of the module's packages.
func check(r rules, graph map[string][]string) []string {
	var errs []string
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, pkg := range pkgs {
		from, _, ok := partOf(r, pkg)
		if !ok {
			errs = append(errs, fmt.Sprintf("%s is in no part: put it in a part's folder, or add it to the table of parts in README.md's layout section", pkg))
			continue
		}
	imports:
		for _, imp := range graph[pkg] {
			to, _, ok := partOf(r, imp)
			if !ok {
				continue // reported as a package of its own
			}
			for _, nv := range r.never {
				if !slices.Contains(nv.from, from.name) {
					continue
				}
				for _, pat := range nv.imports {
					if match(pat, imp) >= 0 {
						errs = append(errs, fmt.Sprintf("%s (%s) imports %s: %s never imports %s: %s", pkg, from.name, imp, from.name, pat, nv.why))
						continue imports
					}
				}
			}
			if to.order > from.order {
				errs = append(errs, fmt.Sprintf("%s (%s) imports %s (%s): a part imports only its own packages and those of the parts before it in README.md's table (%s comes after %s); move the shared code into a lower part, or define the interface where it is used", pkg, from.name, imp, to.name, to.name, from.name))
			}
		}
	}
	return errs
}

// checkOnly returns one line for every import, by a package of the module
// or its tests, of a package outside the module that a row of the table of
// adapters keeps to its adapters. external maps a package (relative to the
// module) to its and its tests' imports from outside the module.
func checkOnly(r rules, external map[string][]string) []string {
	var errs []string
	pkgs := slices.Sorted(mapKeys(external))
	for _, pkg := range pkgs {
		for _, imp := range external[pkg] {
			for _, o := range r.only {
				if !slices.ContainsFunc(o.imports, func(pat string) bool { return match(pat, imp) >= 0 }) ||
					slices.ContainsFunc(o.adapters, func(pat string) bool { return match(pat, pkg) >= 0 }) {
					continue
				}
				errs = append(errs, fmt.Sprintf("%s imports %s: only %s may import %s (README.md's table of adapters): %s; use what the adapter provides, or extend it",
					pkg, imp, strings.Join(o.adapters, ", "), strings.Join(o.imports, ", "), o.why))
			}
		}
	}
	return errs
}

// listing is what `go list` says of the module's packages: their imports
// of the module's packages, relative to the module (graph), and their and
// their tests' imports from outside the module (external).
type listing struct {
	graph    map[string][]string
	external map[string][]string
}

// goList runs `go list` over the module.
func goList(t *testing.T, root string) listing {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}} |{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return ".", true
		}
		return strings.CutPrefix(p, module+"/")
	}
	l := listing{graph: map[string][]string{}, external: map[string][]string{}}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		imports, tests, _ := strings.Cut(line, " |")
		f := strings.Fields(imports)
		p, ok := rel(f[0])
		if !ok {
			continue
		}
		l.graph[p] = nil
		for _, imp := range f[1:] {
			if r, ok := rel(imp); ok {
				l.graph[p] = append(l.graph[p], r)
			} else {
				l.external[p] = append(l.external[p], imp)
			}
		}
		for _, imp := range strings.Fields(tests) {
			if _, ok := rel(imp); !ok && !slices.Contains(l.external[p], imp) {
				l.external[p] = append(l.external[p], imp)
			}
		}
	}
	return l
}

// TestLayering holds the module's imports to the README's tables.
func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := readRules(readme)
	if err != nil {
		t.Fatal(err)
	}
	l := goList(t, root)
	if len(l.graph) < 10 {
		t.Fatalf("go list found %d packages; is the test run inside the module?", len(l.graph))
	}
	for _, e := range check(r, l.graph) {
		t.Error(e)
	}
	for _, e := range checkOnly(r, l.external) {
		t.Error(e)
	}
	// Every pattern names something that exists, so that a renamed
	// package cannot leave a stale row that guards nothing.
	for _, p := range r.parts {
		for _, pat := range p.patterns {
			found := false
			for pkg := range l.graph {
				if in, got, ok := partOf(r, pkg); ok && in.name == p.name && got == pat {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("README.md part %q: %q matches no package; remove or rename it", p.name, pat)
			}
		}
	}
	for _, nv := range r.never {
		for _, pat := range nv.imports {
			if !slices.ContainsFunc(slices.Collect(mapKeys(l.graph)), func(pkg string) bool { return match(pat, pkg) >= 0 }) {
				t.Errorf("README.md rule %v never imports %q: it matches no package; remove or rename it", nv.from, pat)
			}
		}
	}
	for _, o := range r.only {
		for _, pat := range o.adapters {
			if !slices.ContainsFunc(slices.Collect(mapKeys(l.graph)), func(pkg string) bool { return match(pat, pkg) >= 0 }) {
				t.Errorf("README.md adapter %q matches no package; remove or rename it", pat)
			}
		}
	}
	// A part's folder says what it owns and what it must not import, in
	// the doc comment of its own package.
	for _, p := range r.parts {
		dir, ok := strings.CutSuffix(p.patterns[0], "/...")
		if !ok || !strings.HasPrefix(dir, "internal/") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, dir, "doc.go"), nil, parser.PackageClauseOnly|parser.ParseComments)
		var doc string
		if err == nil && file.Doc != nil {
			doc = strings.Join(strings.Fields(file.Doc.Text()), " ")
		}
		switch {
		case doc == "":
			t.Errorf("part %q: no doc comment in %s/doc.go (%v); add one saying what the part owns and what it must not import", p.name, dir, err)
		case !strings.Contains(doc, "must not import") && !strings.Contains(doc, "must not be imported"):
			t.Errorf("part %q: the doc comment of %s does not say what the part must not import", p.name, dir)
		}
	}
}

// mapKeys yields the keys of m.
func mapKeys(m map[string][]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestCheck pins the rules on a small graph: an import against the order,
// an import a rule forbids and a package in no part are each reported,
// exactly; imports within a part and down the order pass.
func TestCheck(t *testing.T) {
	readme := []byte("# x\n\n## Layout\n\n| part | folder | owns |\n|---|---|---|\n" +
		"| model | `internal/model/...` | x |\n| agent | `internal/agent/...` | x |\n| admission | `internal/admission/...` | x |\n| wiring | `cmd/...` | x |\n\n" +
		"| never | imports | why |\n|---|---|---|\n| agent, admission | `internal/model/secret` | secrets stay below |\n\n" +
		"| only | imports | why |\n|---|---|---|\n| `internal/model/yamlx` | `example.com/yaml/x/...` | x may break |\n\n## Next\n\n| a | b | c |\n")
	r, err := readRules(readme)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.parts) != 4 || len(r.never) != 1 || len(r.only) != 1 {
		t.Fatalf("read %d parts, %d rules and %d adapters, want 4, 1 and 1: %+v", len(r.parts), len(r.never), len(r.only), r)
	}
	external := map[string][]string{
		"internal/model/yamlx":   {"example.com/yaml/x/parse", "example.com/yaml"},
		"internal/agent/session": {"example.com/yaml", "example.com/yaml/x"},
	}
	wantOnly := []string{"internal/agent/session imports example.com/yaml/x: only internal/model/yamlx may import example.com/yaml/x/... (README.md's table of adapters): x may break; use what the adapter provides, or extend it"}
	if got := checkOnly(r, external); !slices.Equal(got, wantOnly) {
		t.Errorf("checkOnly =\n%q\nwant\n%q", got, wantOnly)
	}
	for _, tc := range []struct {
		name  string
		graph map[string][]string
		want  []string
	}{
		{"imports within a part and down the order pass", map[string][]string{
			"cmd/skillgate":              {"internal/admission/install", "internal/model/skill"},
			"internal/admission/install": {"internal/admission/scan", "internal/agent/session", "internal/model/skill"},
			"internal/admission/scan":    nil, "internal/agent/session": nil, "internal/model/skill": nil,
		}, nil},
		{"an import against the order fails", map[string][]string{
			"internal/agent/session": {"internal/admission/install"}, "internal/admission/install": nil,
		}, []string{"internal/agent/session (agent) imports internal/admission/install (admission): a part imports only its own packages and those of the parts before it in README.md's table (admission comes after agent); move the shared code into a lower part, or define the interface where it is used"}},
		{"an import a rule forbids fails", map[string][]string{
			"internal/agent/session": {"internal/model/secret"}, "internal/model/secret": nil,
		}, []string{"internal/agent/session (agent) imports internal/model/secret: agent never imports internal/model/secret: secrets stay below"}},
		{"a package in no part fails", map[string][]string{
			"vfs": nil,
		}, []string{"vfs is in no part: put it in a part's folder, or add it to the table of parts in README.md's layout section"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := check(r, tc.graph); !slices.Equal(got, tc.want) {
				t.Errorf("check =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
	for _, tc := range []struct{ readme, want string }{
		{"## Layout\n\nno table\n", "no table of parts"},
		{"## Layout\n\n| part | folder | owns |\n|---|---|---|\n| a | `x/...` | y |\n\n| never | imports | why |\n|---|---|---|\n| b | `x` | z |\n", `README.md:9: rule names part "b"`},
	} {
		if _, err := readRules([]byte(tc.readme)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("readRules(%q): err = %v, want %q", tc.readme, err, tc.want)
		}
	}
}
