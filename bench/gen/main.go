// Command gen writes a deterministic tree of realistic Agent Skills for
// benchmarks:
//
//	go run ./bench/gen -n 10000 -out DIR [-seed 1] [-reuse] [-json]
//
// Each skill is DIR/<category>/<name>/ with a SKILL.md of 2–20 KB (YAML
// frontmatter, then a Markdown body) and 0–4 more files (scripts/run.sh,
// scripts/helper.py, references/REFERENCE.md, assets/template.txt), each
// 0.5–8 KB. Names follow the Agent Skills specification and equal their
// directory name, except for the 3% of skills that are deliberately invalid
// (uppercase name, missing description, name ≠ directory, unknown top-level
// key). 5% carry the skillgate extensions tier/invokable_by under metadata.
//
// The same -n and -seed give byte-identical trees on any machine. When it is
// done, gen writes DIR/.skillgate-bench-gen.json with the parameters and the
// totals; -reuse skips the work when that file already matches. gen only
// deletes a directory that holds such a file; any other non-empty -out is an
// error. Standard library only.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// generatorVersion changes whenever the output for a given -n/-seed changes.
const generatorVersion = "skillgate-bench-gen/1"

// StampFile is written into the output directory, last.
const StampFile = ".skillgate-bench-gen.json"

// Totals describes one generated tree. It is the content of StampFile.
type Totals struct {
	Generator     string         `json:"generator"`
	N             int            `json:"n"`
	Seed          uint64         `json:"seed"`
	Complete      bool           `json:"complete"`
	Skills        int            `json:"skills"`
	Categories    int            `json:"categories"`
	Files         int            `json:"files"`
	Bytes         int64          `json:"bytes"`
	SkillMDBytes  int64          `json:"skill_md_bytes"`
	ExpectedValid int            `json:"expected_valid"`
	Invalid       int            `json:"invalid"`
	InvalidByKind map[string]int `json:"invalid_by_kind"`
	WithTier      int            `json:"with_tier"`
}

func main() {
	n := flag.Int("n", 10000, "number of skills")
	out := flag.String("out", "", "output directory (required)")
	seed := flag.Uint64("seed", 1, "random seed; the same seed gives the same tree")
	reuse := flag.Bool("reuse", false, "do nothing when -out already holds a complete tree for the same -n and -seed")
	asJSON := flag.Bool("json", false, "print the totals as JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: gen -n N -out DIR [-seed S] [-reuse] [-json]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || *n < 1 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	start := time.Now()
	t, reused, err := run(*out, *n, *seed, *reuse)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(t)
		return
	}
	printTotals(t, *out, reused, time.Since(start))
}

func printTotals(t Totals, out string, reused bool, took time.Duration) {
	verb := "generated"
	if reused {
		verb = "reused"
	}
	fmt.Printf("%s %d skills in %d categories under %s (seed %d, %s)\n", verb, t.Skills, t.Categories, out, t.Seed, took.Round(time.Millisecond))
	fmt.Printf("  files:  %d (%d SKILL.md + %d others)\n", t.Files, t.Skills, t.Files-t.Skills)
	fmt.Printf("  bytes:  %d (%.1f MiB; SKILL.md %.1f MiB, mean %.1f KiB)\n", t.Bytes, float64(t.Bytes)/(1<<20), float64(t.SkillMDBytes)/(1<<20), float64(t.SkillMDBytes)/float64(t.Skills)/1024)
	var kinds []string
	for _, k := range invalidKindNames[1:] {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, t.InvalidByKind[k]))
	}
	fmt.Printf("  deliberately invalid: %d (%s)\n", t.Invalid, strings.Join(kinds, ", "))
	fmt.Printf("  with tier/invokable_by under metadata: %d\n", t.WithTier)
}

// readStamp returns the stamp in dir, if any.
func readStamp(dir string) (Totals, bool) {
	var t Totals
	b, err := os.ReadFile(filepath.Join(dir, StampFile))
	if err != nil || json.Unmarshal(b, &t) != nil {
		return t, false
	}
	return t, true
}

func writeStamp(dir string, t Totals) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, StampFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, StampFile))
}

// run prepares out and generates the tree into it.
func run(out string, n int, seed uint64, reuse bool) (Totals, bool, error) {
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return Totals{}, false, err
	case len(entries) > 0:
		old, ours := readStamp(out)
		if !ours {
			return Totals{}, false, fmt.Errorf("%s is not empty and was not written by gen (no %s); choose another -out", out, StampFile)
		}
		if reuse && old.Complete && old.Generator == generatorVersion && old.N == n && old.Seed == seed {
			return old, true, nil
		}
		if err := os.RemoveAll(out); err != nil {
			return Totals{}, false, err
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return Totals{}, false, err
	}
	t := Totals{Generator: generatorVersion, N: n, Seed: seed}
	// An incomplete stamp first, so that an interrupted run can be cleaned
	// up by the next one.
	if err := writeStamp(out, t); err != nil {
		return Totals{}, false, err
	}
	t, err = Generate(out, n, seed)
	if err != nil {
		return Totals{}, false, err
	}
	t.Complete = true
	return t, false, writeStamp(out, t)
}

// Generate writes n skills under out, which must exist.
func Generate(out string, n int, seed uint64) (Totals, error) {
	plans := makePlans(n, seed)
	t := Totals{Generator: generatorVersion, N: n, Seed: seed, Skills: n, InvalidByKind: map[string]int{}}
	cats := map[string]bool{}
	for _, p := range plans {
		cats[p.cat.name] = true
		if p.kind != kindOK {
			t.Invalid++
			t.InvalidByKind[invalidKindNames[p.kind]]++
		}
		if p.tier {
			t.WithTier++
		}
	}
	t.Categories = len(cats)
	t.ExpectedValid = n - t.Invalid
	for c := range cats {
		if err := os.MkdirAll(filepath.Join(out, c), 0o755); err != nil {
			return t, err
		}
	}

	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan int)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var files int
			var bytes, mdBytes int64
			for i := range jobs {
				fl := render(plans[i], seed)
				for _, f := range fl {
					path := filepath.Join(out, filepath.FromSlash(f.path))
					err := os.MkdirAll(filepath.Dir(path), 0o755)
					if err == nil {
						err = os.WriteFile(path, f.data, f.mode)
					}
					if err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
						continue
					}
					files++
					bytes += int64(len(f.data))
					if strings.HasSuffix(f.path, "/SKILL.md") {
						mdBytes += int64(len(f.data))
					}
				}
			}
			mu.Lock()
			t.Files += files
			t.Bytes += bytes
			t.SkillMDBytes += mdBytes
			mu.Unlock()
		}()
	}
	for i := range plans {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return t, firstErr
}

type invalidKind int

const (
	kindOK invalidKind = iota
	kindUppercase
	kindNoDescription
	kindNameMismatch
	kindUnknownKey
)

var invalidKindNames = []string{"ok", "uppercase-name", "missing-description", "name-mismatch", "unknown-key"}

// plan is what must be decided globally for one skill (its identity and
// whether it is invalid); everything else comes from its own random stream.
type plan struct {
	index int
	cat   *category
	verb  string
	noun  string
	base  string // a valid, unique name
	dir   string // the directory name
	name  string // the frontmatter name
	kind  invalidKind
	tier  bool
}

// planStream and skillStream keep the two kinds of random streams apart.
const (
	planStream  = 0x706c616e // "plan"
	skillStream = 0x736b696c // "skil"
)

func makePlans(n int, seed uint64) []plan {
	r := newRand(seed, planStream)
	used := make(map[string]bool, n)
	plans := make([]plan, n)
	for i := range plans {
		// A mild skew: some categories are much bigger than others, as in
		// real collections. Every category gets a share.
		ci := int(float64(len(categories)) * math.Pow(r.Float64(), 1.4))
		c := &categories[ci]
		var verb, noun, name string
		for try := 0; ; try++ {
			verb = verbs[r.IntN(len(verbs))]
			noun = c.nouns[r.IntN(len(c.nouns))]
			q := qualifiers[r.IntN(len(qualifiers))]
			switch k := r.IntN(10); {
			case k < 5:
				name = verb + "-" + noun
			case k < 8:
				name = verb + "-" + noun + "-" + q
			default:
				name = noun + "-" + q
			}
			if try >= 20 {
				name = fmt.Sprintf("%s-%d", name, i)
			}
			if !used[name] {
				break
			}
		}
		used[name] = true
		plans[i] = plan{index: i, cat: c, verb: verb, noun: noun, base: name, dir: name, name: name}
	}
	perm := r.Perm(n)
	nInvalid := int(math.Round(0.03 * float64(n)))
	nTier := int(math.Round(0.05 * float64(n)))
	for j, i := range perm[:nInvalid] {
		p := &plans[i]
		p.kind = invalidKind(1 + j%4)
		switch p.kind {
		case kindUppercase:
			p.dir = titleWords(p.base, "-")
			p.name = p.dir
		case kindNameMismatch:
			p.name = p.base + "-old"
		}
	}
	for _, i := range perm[nInvalid : nInvalid+nTier] {
		plans[i].tier = true
	}
	return plans
}

// titleWords turns "analyze-csv-files" into "Analyze-Csv-Files" (sep "-") or
// "Analyze Csv Files" (sep " ").
func titleWords(name, sep string) string {
	parts := strings.Split(name, "-")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, sep)
}
