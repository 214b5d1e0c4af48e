// Command parsebench measures the candidate parsers and tokenizers for the
// content scanner's code rules (issue 31, point 3) on the scripts of the public
// corpus: how many files each one reads without error, why the others fail,
// the time per file and per MB, and the allocations. The choice of one per
// language, and the numbers behind it, are in README.md next to this file;
// binsize.sh measures what each adds to the skillgate binary.
//
//	go run ./bench/parsebench -corpus ../shared/corpus
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"github.com/skillgate/skillgate/internal/admission/secscan/codescan"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	gojafile "github.com/dop251/goja/file"
	gojaparser "github.com/dop251/goja/parser"
	pyparser "github.com/go-python/gpython/parser"
	"github.com/go-python/gpython/py"
	"mvdan.cc/sh/v3/syntax"
)

// input is one file, or one fenced shell block of a Markdown file, to parse.
type input struct {
	path string
	src  []byte
}

// corpus is the inventory of the scripts found under the corpus root.
type corpus struct {
	files, bytes int
	byExt        map[string][2]int // extension -> files, bytes
	shebang      map[string]int    // interpreter named by a #! line -> files
	shebangFiles int
	py, js, ts   []input
	sh, mdShell  []input
}

func main() {
	root := flag.String("corpus", "../shared/corpus", "the corpus root (one folder per skill)")
	runs := flag.Int("runs", 5, "timed passes over each language's files; the fastest is reported")
	verbose := flag.Bool("v", false, "print every failure")
	counts := flag.Bool("pycounts", false, "print each Python file's string and comment counts from the hand-written tokenizer (pytokcheck.py compares them with CPython's tokenize) and exit")
	flag.Parse()
	c, err := inventory(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "parsebench:", err)
		os.Exit(2)
	}
	if *counts {
		printPyCounts(c.py)
		return
	}
	c.print()
	fmt.Printf("\n| language | candidate | files | parsed | rate | µs/file | ms/MB | allocs/file | KB alloc/file |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var all []result
	for _, m := range []struct {
		lang, name string
		files      []input
		parse      func(input) error
		classify   func(input, error) string
	}{
		{"shell (.sh, #! sh/bash)", "mvdan.cc/sh/v3 (bash)", c.sh, parseShell, reasonOther},
		{"shell (```sh blocks in .md)", "mvdan.cc/sh/v3 (bash)", c.mdShell, parseShell, reasonOther},
		{"Python", "gpython parser v0.2.0", c.py, parsePython, reasonPython},
		{"Python", "hand-written tokenizer", c.py, func(in input) error { _, err := codescan.TokenizePython(in.src); return err }, reasonOther},
		{"JavaScript (.js .mjs .cjs)", "goja parser", c.js, parseJS, reasonJS},
		{"JavaScript (.js .mjs .cjs)", "hand-written tokenizer", c.js, func(in input) error { _, err := codescan.TokenizeJS(in.src); return err }, reasonOther},
		{"TypeScript (.ts)", "goja parser", c.ts, parseJS, reasonJS},
		{"TypeScript (.ts)", "hand-written tokenizer", c.ts, func(in input) error { _, err := codescan.TokenizeJS(in.src); return err }, reasonOther},
	} {
		r := measure(m.lang, m.name, m.files, m.parse, m.classify, *runs)
		r.print()
		all = append(all, r)
	}
	for _, r := range all {
		r.printReasons(*verbose)
	}
}

// inventory walks root and sorts its scripts by language.
func inventory(root string) (*corpus, error) {
	c := &corpus{byExt: map[string][2]int{}, shebang: map[string]int{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		c.files++
		c.bytes += len(src)
		ext := strings.ToLower(filepath.Ext(path))
		in := input{path, src}
		interp := shebangInterpreter(src)
		if interp != "" {
			c.shebangFiles++
			c.shebang[interp]++
		}
		switch {
		case ext == ".py" || ext == "" && strings.HasPrefix(interp, "python"):
			c.py = append(c.py, in)
		case ext == ".js" || ext == ".mjs" || ext == ".cjs" || ext == "" && interp == "node":
			c.js = append(c.js, in)
		case ext == ".ts" || ext == ".mts" || ext == ".tsx":
			c.ts = append(c.ts, in)
		case ext == ".sh" || ext == ".bash" || ext == "" && (interp == "sh" || interp == "bash" || interp == "zsh"):
			c.sh = append(c.sh, in)
		case ext == ".md":
			c.mdShell = append(c.mdShell, shellBlocks(in)...)
		}
		switch ext {
		case ".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".tsx", ".sh", ".bash", ".zsh", ".ps1", ".rb", ".pl":
			v := c.byExt[ext]
			c.byExt[ext] = [2]int{v[0] + 1, v[1] + len(src)}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", root, err)
	}
	return c, nil
}

// shebangInterpreter returns the interpreter a #! line names ("python3",
// "bash", "node"), following /usr/bin/env, or "" when there is none.
func shebangInterpreter(src []byte) string {
	if !bytes.HasPrefix(src, []byte("#!")) {
		return ""
	}
	line, _, _ := bytes.Cut(src[2:], []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) == 0 {
		return "?"
	}
	name := filepath.Base(f[0])
	if name == "env" {
		for _, a := range f[1:] {
			if !strings.HasPrefix(a, "-") {
				return a
			}
		}
	}
	return name
}

var fenceShell = regexp.MustCompile("^\\s*```+\\s*(bash|sh|shell|zsh)\\s*$")

// shellBlocks returns the fenced bash, sh, shell and zsh blocks of a Markdown file.
func shellBlocks(in input) []input {
	var out []input
	var cur *bytes.Buffer
	start := 0
	sc := bufio.NewScanner(bytes.NewReader(in.src))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && fenceShell.MatchString(line):
			cur, start = &bytes.Buffer{}, n
		case cur != nil && strings.HasPrefix(strings.TrimSpace(line), "```"):
			out = append(out, input{fmt.Sprintf("%s:%d", in.path, start), cur.Bytes()})
			cur = nil
		case cur != nil:
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	return out
}

func (c *corpus) print() {
	fmt.Printf("corpus: %d files, %.1f MB; %d files start with #!\n\n", c.files, float64(c.bytes)/(1<<20), c.shebangFiles)
	fmt.Printf("| extension | files | KB |\n|---|---:|---:|\n")
	exts := make([]string, 0, len(c.byExt))
	for e := range c.byExt {
		exts = append(exts, e)
	}
	sort.Strings(exts)
	for _, e := range exts {
		fmt.Printf("| %s | %d | %.1f |\n", e, c.byExt[e][0], float64(c.byExt[e][1])/1024)
	}
	fmt.Printf("\n| #! interpreter | files |\n|---|---:|\n")
	names := make([]string, 0, len(c.shebang))
	for n := range c.shebang {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Printf("| %s | %d |\n", n, c.shebang[n])
	}
	fmt.Printf("\nmeasured sets: Python %d files (%.0f KB), JavaScript %d (%.0f KB), TypeScript %d (%.0f KB), shell scripts %d (%.0f KB), shell blocks of .md files %d (%.0f KB)\n",
		len(c.py), kb(c.py), len(c.js), kb(c.js), len(c.ts), kb(c.ts), len(c.sh), kb(c.sh), len(c.mdShell), kb(c.mdShell))
}

func kb(in []input) float64 {
	n := 0
	for _, f := range in {
		n += len(f.src)
	}
	return float64(n) / 1024
}

func parseShell(in input) error {
	_, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(in.src), in.path)
	return err //nolint:wrapcheck // the benchmark only classifies the parser's own error
}

func parsePython(in input) error {
	_, err := pyparser.Parse(bytes.NewReader(in.src), in.path, py.ExecMode)
	return err //nolint:wrapcheck // the benchmark only classifies the parser's own error
}

func parseJS(in input) error {
	_, err := gojaparser.ParseFile(new(gojafile.FileSet), in.path, string(in.src), 0, gojaparser.WithDisableSourceMaps)
	return err //nolint:wrapcheck // the benchmark only classifies the parser's own error
}

// result is one candidate's measurement on one language's files.
type result struct {
	lang, name      string
	files, ok       int
	bytes           int
	best            time.Duration
	mallocs, allocB uint64
	reasons         map[string][]string // reason -> files
}

func measure(lang, name string, files []input, parse func(input) error, classify func(input, error) string, runs int) result {
	r := result{lang: lang, name: name, files: len(files), reasons: map[string][]string{}}
	for _, in := range files {
		r.bytes += len(in.src)
		if err := safeParse(parse, in); err != nil {
			reason := classify(in, err)
			r.reasons[reason] = append(r.reasons[reason], in.path)
			continue
		}
		r.ok++
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, in := range files {
		_ = safeParse(parse, in)
	}
	runtime.ReadMemStats(&after)
	r.mallocs, r.allocB = after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc
	for range runs {
		t := time.Now()
		for _, in := range files {
			_ = safeParse(parse, in)
		}
		if d := time.Since(t); r.best == 0 || d < r.best {
			r.best = d
		}
	}
	return r
}

// errPanic is a parser's panic, turned into a failure of that file.
var errPanic = errors.New("parser panicked")

func safeParse(parse func(input) error, in input) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errPanic, p)
		}
	}()
	return parse(in)
}

func (r result) print() {
	if r.files == 0 {
		fmt.Printf("| %s | %s | 0 | | | | | | |\n", r.lang, r.name)
		return
	}
	n := float64(r.files)
	fmt.Printf("| %s | %s | %d | %d | %.1f %% | %.0f | %.1f | %.0f | %.1f |\n", r.lang, r.name, r.files, r.ok,
		100*float64(r.ok)/n, float64(r.best.Microseconds())/n,
		float64(r.best.Microseconds())/1000/(float64(r.bytes)/(1<<20)),
		float64(r.mallocs)/n, float64(r.allocB)/1024/n)
}

func (r result) printReasons(verbose bool) {
	if len(r.reasons) == 0 {
		return
	}
	fmt.Printf("\n%s, %s: failures by reason\n", r.lang, r.name)
	keys := make([]string, 0, len(r.reasons))
	for k := range r.reasons {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(r.reasons[keys[i]]) != len(r.reasons[keys[j]]) {
			return len(r.reasons[keys[i]]) > len(r.reasons[keys[j]])
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		fmt.Printf("  %4d  %s\n", len(r.reasons[k]), k)
		if verbose {
			for _, p := range r.reasons[k] {
				fmt.Printf("          %s\n", p)
			}
		}
	}
}

func reasonOther(_ input, err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "line ") || strings.HasPrefix(msg, "at end") {
		return msg[i+2:]
	}
	if _, rest, ok := strings.Cut(msg, ": "); ok && strings.Contains(msg, ":") {
		return trimPos(rest)
	}
	return msg
}

var posPrefix = regexp.MustCompile(`^\d+:\d+: `)

func trimPos(s string) string { return posPrefix.ReplaceAllString(s, "") }

// The Python features newer than gpython's 3.4 grammar, checked on the line a
// parse fails at (and the line before it).
var pyFeatures = []struct {
	name string
	re   *regexp.Regexp
}{
	{"f-string (3.6)", regexp.MustCompile(`(^|[^\w])([rR]?[fF]|[fF][rR])['"]`)},
	{"walrus := (3.8)", regexp.MustCompile(`:=`)},
	{"match/case (3.10)", regexp.MustCompile(`^\s*(match|case)\s.*:\s*$`)},
	{"async/await (3.5)", regexp.MustCompile(`\b(async|await)\b`)},
	{"variable annotation x: T (3.6)", regexp.MustCompile(`^\s*[\w.\[\]'"]+\s*:\s*[\w.\[\], |'"]+\s*(=.*)?$`)},
	{"* or ** unpacking in a display or call (3.5)", regexp.MustCompile(`[\[{(,]\s*\*\*?\w`)},
	{"matrix @ operator (3.5)", regexp.MustCompile(`\w\s*@=?\s*\w`)},
	{"digits with _ (3.6)", regexp.MustCompile(`\d_\d`)},
	{"keyword-only / positional-only marker (3.8)", regexp.MustCompile(`,\s*/\s*[,)]`)},
}

func reasonPython(in input, err error) string {
	var exc *py.Exception
	if !errors.As(err, &exc) {
		return "other: " + err.Error()
	}
	n, _ := exc.Dict["lineno"].(py.Int)
	lines := strings.Split(string(in.src), "\n")
	for _, k := range []int{int(n) - 1, int(n) - 2} {
		if k < 0 || k >= len(lines) {
			continue
		}
		for _, f := range pyFeatures {
			if f.re.MatchString(lines[k]) {
				return f.name
			}
		}
	}
	// A failure at the end of a triple-quoted string is one at its start.
	if k := int(n) - 1; k > 0 && k < len(lines) {
		for _, q := range []string{`"""`, `'''`} {
			if !strings.Contains(lines[k], q) {
				continue
			}
			for j := k - 1; j >= 0; j-- {
				if strings.Contains(lines[j], q) {
					if pyFeatures[0].re.MatchString(lines[j]) {
						return pyFeatures[0].name
					}
					break
				}
			}
		}
	}
	return "other: " + exc.Error()
}

func reasonJS(in input, err error) string {
	var list gojaparser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return "other: " + err.Error()
	}
	e := list[0]
	lines := strings.Split(string(in.src), "\n")
	line := ""
	if e.Position.Line-1 < len(lines) && e.Position.Line > 0 {
		line = strings.TrimSpace(lines[e.Position.Line-1])
	}
	switch {
	case strings.HasSuffix(in.path, ".ts"):
		return "TypeScript syntax: " + e.Message
	case strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "export ") || strings.Contains(line, "import("):
		return "ES module import/export"
	}
	return e.Message
}

// printPyCounts prints, per Python file, the strings and comments the
// hand-written tokenizer finds, with the first line of each, tab-separated.
func printPyCounts(files []input) {
	for _, in := range files {
		toks, err := codescan.TokenizePython(in.src)
		if err != nil {
			fmt.Printf("%s\terror\n", in.path)
			continue
		}
		var b strings.Builder
		for _, t := range toks {
			switch t.Kind {
			case codescan.String:
				fmt.Fprintf(&b, " s%d", t.Line)
			case codescan.Comment:
				fmt.Fprintf(&b, " c%d", t.Line)
			default: // CPython's tokenize is compared on strings and comments only
			}
		}
		fmt.Printf("%s\t%s\n", in.path, strings.TrimSpace(b.String()))
	}
}
