package main

import (
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
)

// Size bounds, in bytes.
const (
	minSkillMD = 2 << 10
	maxSkillMD = 20 << 10
	minExtra   = 512
	maxExtra   = 8 << 10
	minDesc    = 80
	maxDesc    = 600
)

func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

type file struct {
	path string // slash-separated, relative to the output directory
	data []byte
	mode fs.FileMode
}

// skillGen holds the random stream and the words of one skill.
type skillGen struct {
	r *rand.Rand
	p plan
}

func (g *skillGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

// between returns an integer in [lo, hi].
func (g *skillGen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

func (g *skillGen) chance(pct int) bool { return g.r.IntN(100) < pct }

func words(s string) string { return strings.ReplaceAll(s, "-", " ") }

func (g *skillGen) nounText() string {
	if g.chance(60) {
		return words(g.p.noun)
	}
	return words(g.pick(g.p.cat.nouns))
}

// render builds the files of one skill. It depends only on p and seed.
func render(p plan, seed uint64) []file {
	g := &skillGen{r: newRand(seed, skillStream<<32|uint64(p.index)), p: p}
	dir := p.cat.name + "/" + p.dir + "/"

	var extras []string
	all := []string{"scripts/run.sh", "scripts/helper.py", "references/REFERENCE.md", "assets/template.txt"}
	for _, i := range g.r.Perm(len(all))[:g.r.IntN(len(all)+1)] {
		extras = append(extras, all[i])
	}
	sort.Strings(extras)

	files := []file{{path: dir + "SKILL.md", data: g.skillMD(extras), mode: 0o644}}
	for _, e := range extras {
		target := g.between(minExtra, maxExtra)
		var data []byte
		mode := fs.FileMode(0o644)
		switch e {
		case "scripts/run.sh":
			data, mode = g.runSh(target), 0o755
		case "scripts/helper.py":
			data = g.helperPy(target)
		case "references/REFERENCE.md":
			data = g.referenceMD(target)
		default:
			data = g.templateTxt(target)
		}
		files = append(files, file{path: dir + e, data: data, mode: mode})
	}
	return files
}

// grow appends blocks to buf until buf+footer reaches target, without
// letting buf+footer exceed max (a block that would is dropped), then appends
// footer.
func grow(buf []byte, target, max int, footer string, block func([]byte) []byte) []byte {
	limit := max - len(footer)
	for len(buf)+len(footer) < target {
		mark := len(buf)
		buf = block(buf)
		if len(buf) > limit {
			buf = buf[:mark]
			break
		}
	}
	return append(buf, footer...)
}

// thirdPerson turns "analyze" into "Analyzes".
func thirdPerson(v string) string {
	switch {
	case strings.HasSuffix(v, "sh"), strings.HasSuffix(v, "ch"), strings.HasSuffix(v, "x"), strings.HasSuffix(v, "s"):
		v += "es"
	case strings.HasSuffix(v, "y") && !strings.ContainsAny(v[len(v)-2:len(v)-1], "aeiou"):
		v = v[:len(v)-1] + "ies"
	default:
		v += "s"
	}
	return strings.ToUpper(v[:1]) + v[1:]
}

// fill replaces {v} with the skill's verb, {n} with a noun of its category
// and {t} with one of its tools.
func (g *skillGen) fill(tmpl string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 || i+2 >= len(tmpl) || tmpl[i+2] != '}' {
			b.WriteString(tmpl)
			return b.String()
		}
		b.WriteString(tmpl[:i])
		switch tmpl[i+1] {
		case 'v':
			b.WriteString(g.p.verb)
		case 'n':
			b.WriteString(words(g.pick(g.p.cat.nouns)))
		default:
			b.WriteString(g.pick(g.p.cat.tools))
		}
		tmpl = tmpl[i+3:]
	}
}

// description is 80–600 characters of plain text without YAML indicators.
func (g *skillGen) description() string {
	target := minDesc + (g.r.IntN(maxDesc-minDesc+1)+g.r.IntN(maxDesc-minDesc+1))/2
	s := fmt.Sprintf("%s %s %s.", thirdPerson(g.p.verb), words(g.p.noun), g.pick(purposes))
	s += " Use when " + g.fill(g.pick(triggers)) + "."
	for _, i := range g.r.Perm(len(extras)) {
		if len(s) >= target {
			break
		}
		next := g.fill(extras[i])
		if len(s)+1+len(next) > maxDesc {
			break
		}
		s += " " + next
	}
	for len(s) < minDesc { // not reached with the current word banks
		s += " Ask before overwriting files."
	}
	return s
}

// wrap folds s at spaces into lines of at most width bytes.
func wrap(s string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(s) {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	return append(lines, cur.String())
}

func (g *skillGen) frontmatter() []byte {
	p := g.p
	var b strings.Builder
	b.WriteString("---\n")
	b.WriteString("name: " + p.name + "\n")
	if p.kind != kindNoDescription {
		d := g.description()
		switch k := g.r.IntN(10); {
		case k < 7:
			b.WriteString("description: " + d + "\n")
		case k < 9:
			b.WriteString("description: \"" + d + "\"\n")
		default:
			b.WriteString("description: >-\n")
			for _, l := range wrap(d, 76) {
				b.WriteString("  " + l + "\n")
			}
		}
	}
	if p.kind == kindUnknownKey {
		b.WriteString(g.pick(unknownKeys) + "\n")
	}
	if g.chance(35) {
		b.WriteString("license: " + g.pick(licenses) + "\n")
	}
	if g.chance(15) {
		b.WriteString("compatibility: " + g.pick(compat) + "\n")
	}
	if g.chance(25) {
		b.WriteString("allowed-tools: " + g.pick(allowedTools) + "\n")
	}
	if g.chance(45) || p.tier {
		b.WriteString("metadata:\n")
		if g.chance(80) {
			b.WriteString("  author: " + g.pick(authors) + "\n")
		}
		if g.chance(60) {
			fmt.Fprintf(&b, "  version: \"%d.%d.%d\"\n", g.between(0, 3), g.between(0, 12), g.between(0, 20))
		}
		if p.tier {
			tier := g.between(1, 3)
			fmt.Fprintf(&b, "  tier: \"%d\"\n", tier)
			if g.chance(70) {
				allowed := []string{"T0", "T1", "T2", "T3", "T4"}[:map[int]int{1: 5, 2: 4, 3: 2}[tier]]
				var list []string
				for _, t := range allowed {
					if g.chance(70) {
						list = append(list, t)
					}
				}
				if len(list) == 0 {
					list = allowed[:1]
				}
				b.WriteString("  invokable_by: \"" + strings.Join(list, ", ") + "\"\n")
			}
		}
		if g.chance(30) {
			b.WriteString("  source: internal\n")
		}
	}
	b.WriteString("---\n\n")
	return []byte(b.String())
}

func (g *skillGen) sentence() string {
	obj := g.pick(objects)
	if g.chance(35) {
		obj = "the " + g.nounText()
	}
	s := g.pick(subjects) + " " + g.pick(actions) + " " + obj + " " + g.pick(modifiers) + "."
	switch k := g.r.IntN(12); k {
	case 0:
		s += " Run `scripts/run.sh --check` first if you are unsure."
	case 1:
		s += fmt.Sprintf(" Prefer `%s` over ad-hoc commands.", g.pick(g.p.cat.tools))
	case 2:
		s += " See [the reference](references/REFERENCE.md) for every option."
	}
	return s
}

func (g *skillGen) paragraph(buf []byte) []byte {
	n := g.between(2, 6)
	for i := 0; i < n; i++ {
		if i > 0 {
			buf = append(buf, ' ')
		}
		buf = append(buf, g.sentence()...)
	}
	return append(buf, "\n\n"...)
}

func (g *skillGen) bullets(buf []byte, numbered bool) []byte {
	n := g.between(3, 8)
	for i := 1; i <= n; i++ {
		if numbered {
			buf = fmt.Appendf(buf, "%d. ", i)
		} else {
			buf = append(buf, "- "...)
		}
		if g.chance(40) {
			buf = fmt.Appendf(buf, "**%s**: ", titleWords(g.p.cat.nouns[g.r.IntN(len(g.p.cat.nouns))], " "))
		}
		buf = append(buf, g.sentence()...)
		buf = append(buf, '\n')
	}
	return append(buf, '\n')
}

func (g *skillGen) codeBlock(buf []byte) []byte {
	noun := g.p.noun
	tool := g.pick(g.p.cat.tools)
	switch g.r.IntN(4) {
	case 0:
		buf = append(buf, "```bash\n"...)
		n := g.between(3, 10)
		for i := 0; i < n; i++ {
			switch g.r.IntN(5) {
			case 0:
				buf = fmt.Appendf(buf, "scripts/run.sh --input data/%s.csv --out out/%d\n", noun, i)
			case 1:
				buf = fmt.Appendf(buf, "python3 scripts/helper.py %s --limit %d out/\n", g.p.verb, g.between(10, 500))
			case 2:
				buf = fmt.Appendf(buf, "%s --version\n", tool)
			case 3:
				buf = fmt.Appendf(buf, "# %s\n", strings.TrimSuffix(g.sentence(), "."))
			default:
				buf = fmt.Appendf(buf, "ls -la out/ | grep -c %s\n", strings.SplitN(noun, "-", 2)[0])
			}
		}
	case 1:
		fn := strings.ReplaceAll(g.p.verb+"_"+noun, "-", "_")
		buf = append(buf, "```python\n"...)
		buf = fmt.Appendf(buf, "def %s(items, limit=%d):\n", fn, g.between(10, 1000))
		buf = fmt.Appendf(buf, "    \"\"\"%s\"\"\"\n", g.sentence())
		buf = append(buf, "    results = []\n    for item in items[:limit]:\n"...)
		n := g.between(1, 6)
		for i := 0; i < n; i++ {
			buf = fmt.Appendf(buf, "        if item.get(%q) is None:\n            continue\n", strings.SplitN(g.pick(g.p.cat.nouns), "-", 2)[0])
		}
		buf = append(buf, "        results.append(item)\n    return results\n"...)
	case 2:
		buf = append(buf, "```json\n{\n"...)
		buf = fmt.Appendf(buf, "  \"skill\": %q,\n  \"tool\": %q,\n  \"options\": {\n", g.p.base, tool)
		n := g.between(2, 8)
		for i := 0; i < n; i++ {
			sep := ","
			if i == n-1 {
				sep = ""
			}
			buf = fmt.Appendf(buf, "    \"%s_%d\": %d%s\n", strings.SplitN(g.pick(g.p.cat.nouns), "-", 2)[0], i, g.between(0, 9999), sep)
		}
		buf = append(buf, "  }\n}\n"...)
	default:
		buf = append(buf, "```yaml\n"...)
		buf = fmt.Appendf(buf, "%s:\n  tool: %s\n  inputs:\n", strings.ReplaceAll(g.p.base, "-", "_"), tool)
		n := g.between(2, 7)
		for i := 0; i < n; i++ {
			buf = fmt.Appendf(buf, "    - path: data/%s-%d\n      required: %t\n", g.pick(g.p.cat.nouns), i, g.chance(50))
		}
	}
	return append(buf, "```\n\n"...)
}

func (g *skillGen) table(buf []byte) []byte {
	buf = append(buf, "| Option | Default | Description |\n|---|---|---|\n"...)
	n := g.between(3, 7)
	for i := 0; i < n; i++ {
		buf = fmt.Appendf(buf, "| `--%s` | `%d` | %s |\n", g.pick(g.p.cat.nouns), g.between(0, 100), g.sentence())
	}
	return append(buf, '\n')
}

func (g *skillGen) block(buf []byte) []byte {
	switch k := g.r.IntN(20); {
	case k < 8:
		return g.paragraph(buf)
	case k < 11:
		return g.bullets(buf, false)
	case k < 13:
		return g.bullets(buf, true)
	case k < 17:
		return g.codeBlock(buf)
	case k < 19:
		return g.table(buf)
	default:
		return append(append(buf, "> **Note:** "...), g.sentence()+"\n\n"...)
	}
}

func (g *skillGen) skillMD(extras []string) []byte {
	// Log-uniform between the bounds: many small files, a long tail.
	lo, hi := math.Log(minSkillMD), math.Log(maxSkillMD)
	target := int(math.Exp(lo + g.r.Float64()*(hi-lo)))

	buf := g.frontmatter()
	buf = fmt.Appendf(buf, "# %s\n\n", titleWords(g.p.base, " "))
	buf = g.paragraph(buf)
	if len(extras) > 0 {
		buf = append(buf, "## Files\n\n"...)
		for _, e := range extras {
			buf = fmt.Appendf(buf, "- `%s`: %s\n", e, g.sentence())
		}
		buf = append(buf, '\n')
	}
	titles := g.r.Perm(len(sectionTitles))
	section := 0
	blocksLeft := 0
	return grow(buf, target, maxSkillMD, "", func(b []byte) []byte {
		if blocksLeft == 0 {
			if section < len(titles) {
				b = fmt.Appendf(b, "## %s\n\n", sectionTitles[titles[section]])
			} else {
				b = fmt.Appendf(b, "### Example %d: %s %s\n\n", section-len(titles)+1, g.p.verb, g.nounText())
			}
			section++
			blocksLeft = g.between(1, 4)
		}
		blocksLeft--
		return g.block(b)
	})
}

func (g *skillGen) runSh(target int) []byte {
	buf := fmt.Appendf(nil, "#!/usr/bin/env bash\n# run.sh: entry point of the %s skill.\n# %s\nset -euo pipefail\n\nOUT_DIR=\"${OUT_DIR:-out}\"\nmkdir -p \"$OUT_DIR\"\n\n", g.p.base, g.sentence())
	step := 0
	tool := g.pick(g.p.cat.tools)
	buf = grow(buf, target, maxExtra, "main() {\n  for step in $(declare -F | awk '/ step_/ {print $3}'); do\n    \"$step\" \"${1:-.}\"\n  done\n}\n\nmain \"$@\"\n", func(b []byte) []byte {
		step++
		b = fmt.Appendf(b, "# %s\nstep_%d() {\n  local input=\"${1:?usage: step_%d INPUT}\"\n", g.sentence(), step, step)
		b = fmt.Appendf(b, "  echo \"step %d: %s\" >&2\n", step, g.nounText())
		b = fmt.Appendf(b, "  %s --input \"$input\" --out \"$OUT_DIR/step-%d\" || return 1\n}\n\n", tool, step)
		return b
	})
	return buf
}

func (g *skillGen) helperPy(target int) []byte {
	buf := fmt.Appendf(nil, "#!/usr/bin/env python3\n\"\"\"Helper for the %s skill.\n\n%s\n\"\"\"\nimport argparse\nimport json\nimport sys\n\n", g.p.base, g.sentence())
	fn := 0
	buf = grow(buf, target, maxExtra, "\ndef main(argv=None):\n    parser = argparse.ArgumentParser(description=__doc__)\n    parser.add_argument(\"command\")\n    parser.add_argument(\"--limit\", type=int, default=100)\n    args = parser.parse_args(argv)\n    json.dump({\"command\": args.command, \"limit\": args.limit}, sys.stdout)\n    return 0\n\n\nif __name__ == \"__main__\":\n    sys.exit(main())\n", func(b []byte) []byte {
		fn++
		key := strings.SplitN(g.pick(g.p.cat.nouns), "-", 2)[0]
		b = fmt.Appendf(b, "\ndef step_%d(records):\n    \"\"\"%s\"\"\"\n    out = []\n    for r in records:\n        if not r.get(%q):\n            continue\n        out.append(r)\n    return out\n\n", fn, g.sentence(), key)
		return b
	})
	return buf
}

func (g *skillGen) referenceMD(target int) []byte {
	buf := fmt.Appendf(nil, "# %s reference\n\n", titleWords(g.p.base, " "))
	return grow(buf, target, maxExtra, "", func(b []byte) []byte {
		if g.chance(40) {
			b = fmt.Appendf(b, "## %s\n\n", titleWords(g.pick(g.p.cat.nouns), " "))
		}
		return g.block(b)
	})
}

func (g *skillGen) templateTxt(target int) []byte {
	buf := fmt.Appendf(nil, "Template: %s\nGenerated for: {{name}}\nDate: {{date}}\n\n", g.p.base)
	return grow(buf, target, maxExtra, "\n-- end of template --\n", func(b []byte) []byte {
		b = fmt.Appendf(b, "{{%s}}: %s\n", strings.ReplaceAll(g.pick(g.p.cat.nouns), "-", "_"), g.sentence())
		return b
	})
}
