package layering

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/skillgate/skillgate"

// layer is one row of the README's table: a rank (higher is further up)
// and the package patterns in it, relative to the module: "store" is that
// package, "bench/..." the folder and everything below it.
type layer struct {
	rank     int
	name     string
	patterns []string
}

// readLayers reads the table of layers from the README's "## Layout"
// section: rows of the form "| 3 | name | pkg, pkg/... |".
func readLayers(readme []byte) ([]layer, error) {
	var layers []layer
	in := false
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Layout"
			continue
		}
		if !in || !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if len(cells) != 3 {
			continue
		}
		rank, err := strconv.Atoi(strings.TrimSpace(cells[0]))
		if err != nil {
			continue // the header and the separator
		}
		l := layer{rank: rank, name: strings.TrimSpace(cells[1])}
		for _, p := range strings.Split(cells[2], ",") {
			p = strings.Trim(strings.TrimSpace(p), "`")
			if p == "" {
				return nil, fmt.Errorf("README.md:%d: an empty package pattern in layer %d", n, rank)
			}
			l.patterns = append(l.patterns, p)
		}
		layers = append(layers, l)
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("README.md: no table of layers (rows \"| rank | name | packages |\") in the \"## Layout\" section")
	}
	return layers, sc.Err()
}

// rankOf returns the rank of pkg (relative to the module) and the pattern
// that placed it: an exact pattern wins over a folder one, a longer
// folder over a shorter.
func rankOf(layers []layer, pkg string) (rank int, pattern string, ok bool) {
	best := -1
	for _, l := range layers {
		for _, p := range l.patterns {
			score := -1
			switch {
			case p == pkg:
				score = 1 << 20
			case strings.HasSuffix(p, "/..."):
				dir := strings.TrimSuffix(p, "/...")
				if pkg == dir || strings.HasPrefix(pkg, dir+"/") {
					score = len(dir)
				}
			}
			if score > best {
				best, rank, pattern, ok = score, l.rank, p, true
			}
		}
	}
	return rank, pattern, ok
}

// check returns one line for every package in no layer and for every
// import that does not point to a lower layer. graph maps a package
// (relative to the module) to its imports of the module's packages.
func check(layers []layer, graph map[string][]string) []string {
	var errs []string
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, p := range pkgs {
		r, _, ok := rankOf(layers, p)
		if !ok {
			errs = append(errs, fmt.Sprintf("%s is in no layer: add it to the table of layers in README.md's layout section", p))
			continue
		}
		for _, imp := range graph[p] {
			ri, _, ok := rankOf(layers, imp)
			if ok && ri >= r {
				errs = append(errs, fmt.Sprintf("%s (layer %d) imports %s (layer %d): a package imports only from lower layers; move the shared part down, or define the interface where it is used", p, r, imp, ri))
			}
		}
	}
	return errs
}

// importGraph lists the module's packages and their imports of the
// module's packages, relative to the module, with `go list`.
func importGraph(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
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
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		p, ok := rel(f[0])
		if !ok {
			continue
		}
		graph[p] = nil
		for _, imp := range f[1:] {
			if r, ok := rel(imp); ok {
				graph[p] = append(graph[p], r)
			}
		}
	}
	return graph
}

// TestLayering holds the module's imports to the README's table of layers.
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
	layers, err := readLayers(readme)
	if err != nil {
		t.Fatal(err)
	}
	graph := importGraph(t, root)
	if len(graph) < 10 {
		t.Fatalf("go list found %d packages; is the test run inside the module?", len(graph))
	}
	for _, e := range check(layers, graph) {
		t.Error(e)
	}
	// Every pattern of the table names something that exists, so that a
	// renamed package cannot leave a stale row that guards nothing.
	for _, l := range layers {
		for _, p := range l.patterns {
			found := false
			for pkg := range graph {
				if r, pat, ok := rankOf(layers, pkg); ok && r == l.rank && pat == p {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("README.md layer %d (%s): %q matches no package; remove or rename it", l.rank, l.name, p)
			}
		}
	}
}

// TestCheck pins the rule on a small graph: an upward import, an import
// within one layer and a package in no layer are each reported, exactly.
func TestCheck(t *testing.T) {
	readme := []byte("# x\n\n## Layout\n\n| layer | name | packages |\n|---|---|---|\n" +
		"| 3 | wiring | `cmd/...` |\n| 2 | services | broker, gateway |\n| 1 | domain | skill, store/... |\n\n## Next\n\n| 9 | other | nothing |\n")
	layers, err := readLayers(readme)
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 3 {
		t.Fatalf("read %d layers, want 3: %+v", len(layers), layers)
	}
	for _, tc := range []struct {
		name  string
		graph map[string][]string
		want  []string
	}{
		{"downward imports pass", map[string][]string{
			"cmd/skillgate": {"broker", "skill"}, "broker": {"skill", "store/sqlite"}, "store/sqlite": nil, "skill": nil,
		}, nil},
		{"an upward import fails", map[string][]string{
			"skill": {"broker"}, "broker": nil,
		}, []string{"skill (layer 1) imports broker (layer 2): a package imports only from lower layers; move the shared part down, or define the interface where it is used"}},
		{"an import within a layer fails", map[string][]string{
			"broker": {"gateway"}, "gateway": nil,
		}, []string{"broker (layer 2) imports gateway (layer 2): a package imports only from lower layers; move the shared part down, or define the interface where it is used"}},
		{"a package in no layer fails", map[string][]string{
			"vfs": nil,
		}, []string{"vfs is in no layer: add it to the table of layers in README.md's layout section"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := check(layers, tc.graph); !slices.Equal(got, tc.want) {
				t.Errorf("check =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
	if _, err := readLayers([]byte("## Layout\n\nno table\n")); err == nil || !strings.Contains(err.Error(), "no table of layers") {
		t.Errorf("a README without the table: err = %v", err)
	}
}
