package secscan

import (
	"bytes"
	"fmt"
	"sort"
	"unicode"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/admission/secscan/textnorm"
)

// Prose the model reads (SKILL.md, other Markdown and text, tool
// descriptions) is also read normalised (package textnorm): look-alike
// letters folded in mixed-script words, fullwidth and mathematical letters
// folded by NFKC, invisible characters removed, words joined across a
// hyphenated line break. A pattern rule that matches only the normalised
// text is reported on the original line, its hidden characters written as
// <U+XXXX>, under its own id and severity, with what normalisation revealed
// in its message and the matched normalised text in Finding.Normalized.
// The disguises themselves are SG204–SG206, which do not block on their
// own.

// reread is the text rules' second reading of a file or tool description
// (have are the findings of the first): prose normalised (scanNormalized)
// and a script's encoded literals decoded (decoded.go).
func reread(name string, data []byte, k kind, maxPerRule int, have []Finding) []Finding {
	if k == kindScript {
		return scanDecoded(name, data, k, maxPerRule)
	}
	return scanNormalized(name, data, k, maxPerRule, have)
}

// scanNormalized is the second reading of a prose file or tool
// description; have are the findings of the first, which are not repeated.
// It goes line by line: a pure-ASCII line that does not end in a hyphen is
// passed over at once, and a line that does is normalised together with the
// next one (a word split across them is joined).
func scanNormalized(name string, data []byte, k kind, maxPerRule int, have []Finding) []Finding {
	if k == kindScript || textnorm.Plain(data) {
		return nil
	}
	lines := lineStarts(data)
	seen := map[string]bool{}
	for _, f := range have {
		seen[fmt.Sprintf("%s:%d", f.Rule, f.Line)] = true
	}
	count := map[string]int{}
	var out []Finding
	add := func(r *Rule, from, to int, msg, normalized string) {
		lineNo, line, start := lineOfOffset(data, lines, from)
		key := fmt.Sprintf("%s:%d", r.ID, lineNo)
		if seen[key] || count[r.ID] >= maxPerRule {
			return
		}
		seen[key] = true
		count[r.ID]++
		at, end := from-start, min(to-start, len(line))
		out = append(out, Finding{
			Rule: r.ID, Name: r.Name, Severity: r.severity(k), File: name,
			Line: lineNo, Column: utf8.RuneCount(line[:at]) + 1,
			Excerpt: excerpt(line, at, end), Message: msg, Why: r.Why, Fix: r.Fix,
			Normalized: normalized,
		})
	}
	var lower []byte
	for i := 0; i < len(lines); i++ {
		start, j := lines[i], i
		for j+1 < len(lines) && endsInHyphen(data[lines[j]:lines[j+1]]) {
			j++ // a word may continue on the next line
		}
		end := len(data)
		if j+1 < len(lines) {
			end = lines[j+1]
		}
		chunk := data[start:end]
		i = j
		if textnorm.Plain(chunk) {
			continue
		}
		n := textnorm.Normalize(string(chunk))
		if !n.Changed() {
			continue
		}
		shifted := func(r *Rule, from, to int, msg, normalized string) {
			add(r, start+from, start+to, msg, normalized)
		}
		disguises(chunk, &n, shifted)
		lower = rescan(&n, k, lower, shifted)
	}
	return out
}

// endsInHyphen reports whether line (with its line break) ends in a hyphen
// or a soft hyphen, spaces aside.
func endsInHyphen(line []byte) bool {
	line = bytes.TrimRight(line, " \t\r\n")
	return bytes.HasSuffix(line, []byte("-")) || bytes.HasSuffix(line, []byte("\u00ad"))
}

// rescan runs the pattern rules that read k over the normalised lines of n
// that changed, and adds each match whose original span holds a change.
func rescan(n *textnorm.Text, k kind, lower []byte, add func(r *Rule, from, to int, msg, normalized string)) []byte {
	text := []byte(n.Text)
	for off := 0; off < len(text); {
		end := len(text)
		if i := bytes.IndexByte(text[off:], '\n'); i >= 0 {
			end = off + i
		}
		line := bytes.TrimSuffix(text[off:end], []byte("\r"))
		if len(n.ChangesIn(n.Orig(off), n.Orig(end))) == 0 {
			off = end + 1
			continue // the line as the first reading saw it
		}
		lower = asciiLower(lower[:0], line)
		for _, r := range Rules {
			if !r.reads(k) || r.parsed || r.whole || r.runes != nil || len(r.patterns) == 0 || !r.triggered(lower) {
				continue
			}
			for _, p := range r.patterns {
				loc := p.FindIndex(line)
				if loc == nil {
					continue
				}
				from, to := n.Orig(off+loc[0]), n.Orig(off+loc[1])
				if changes := n.ChangesIn(from, to); len(changes) > 0 {
					add(r, from, to, r.message+", seen after "+textnorm.Describe(changes), string(line[loc[0]:loc[1]]))
				}
				break
			}
		}
		off = end + 1
	}
	return lower
}

// disguises are the SG204–SG206 findings: the changes normalisation made
// that hide a word (a look-alike letter of another script in a Latin word,
// a zero-width character or a soft hyphen inside one). add records one
// finding per rule and line.
func disguises(data []byte, n *textnorm.Text, add func(r *Rule, from, to int, msg, normalized string)) {
	for _, c := range n.Changes {
		size := utf8.RuneLen(c.Rune)
		switch c.Kind {
		case textnorm.LookAlike:
			script := textnorm.ScriptOf(c.Rune)
			if script == "" || script == "Latin" {
				continue // a Latin letter with a diacritic or an IPA letter: one script
			}
			from, to := wordAround(data, c.At)
			word := foldedWord(n, from, to)
			if !insideWord(data, c.At, size) || camelCase(word) || asciiLetters(data[from:to]) < 3 {
				continue // "σz", "γfit", "FcγRIIIa", "iσy": a symbol next to letters, not a letter in a word
			}
			add(RuleByID("SG204"), c.At, c.At+size,
				fmt.Sprintf("%s: %s %c U+%04X in %q", RuleByID("SG204").message, script, c.Rune, c.Rune, data[from:to]), word)
		case textnorm.Removed:
			if !betweenLatinLetters(data, c.At, size) {
				continue
			}
			id := "SG205"
			if c.Rune == 0xAD {
				id = "SG206"
			} else if c.Rune != 0x200B && c.Rune != 0x200C && c.Rune != 0x200D && c.Rune != 0x2060 && c.Rune != 0xFEFF {
				continue
			}
			r := RuleByID(id)
			from, to := wordAround(data, c.At)
			add(r, c.At, c.At+size, fmt.Sprintf("%s: U+%04X", r.message, c.Rune), foldedWord(n, from, to))
		case textnorm.Joined, textnorm.Compat:
			// a hyphenated line break and NFKC's folds are honest typography
			// on their own; they matter only when they hide a rule's match
		}
	}
}

// betweenLatinLetters reports whether the character of size bytes at
// data[at] has a Latin letter right before and right after it (a run of
// invisible characters is SG203's).
func betweenLatinLetters(data []byte, at, size int) bool {
	before, _ := utf8.DecodeLastRune(data[:at])
	after, _ := utf8.DecodeRune(data[at+size:])
	latin := func(r rune) bool { return unicode.IsLetter(r) && unicode.Is(unicode.Latin, r) }
	return latin(before) && latin(after)
}

// insideWord reports whether the character of size bytes at data[at] has a
// letter right before and right after it.
func insideWord(data []byte, at, size int) bool {
	before, _ := utf8.DecodeLastRune(data[:at])
	after, _ := utf8.DecodeRune(data[at+size:])
	return unicode.IsLetter(before) && unicode.IsLetter(after)
}

// asciiLetters counts the ASCII letters of word.
func asciiLetters(word []byte) int {
	n := 0
	for _, c := range word {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			n++
		}
	}
	return n
}

// camelCase reports whether word has a capital after a small letter (a
// name or a symbol such as "FcyRIIIa", not a word of prose).
func camelCase(word string) bool {
	prev := ' '
	for _, r := range word {
		if unicode.IsUpper(r) && unicode.IsLower(prev) {
			return true
		}
		prev = r
	}
	return false
}

// wordAround is the word of data around byte at: letters, digits, marks
// and invisible characters.
func wordAround(data []byte, at int) (from, to int) {
	in := func(r rune) bool {
		return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || textnorm.Invisible(r)
	}
	from = at
	for from > 0 {
		r, n := utf8.DecodeLastRune(data[:from])
		if !in(r) {
			break
		}
		from -= n
	}
	to = at
	for to < len(data) {
		r, n := utf8.DecodeRune(data[to:])
		if !in(r) {
			break
		}
		to += n
	}
	return from, to
}

// foldedWord is the normalised text of the original bytes [from, to).
func foldedWord(n *textnorm.Text, from, to int) string {
	i := sort.Search(len(n.Text), func(i int) bool { return n.Orig(i) >= from })
	j := sort.Search(len(n.Text), func(j int) bool { return n.Orig(j) >= to })
	return n.Text[i:j]
}

// lineStarts are the byte offsets at which data's lines start.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineOfOffset is the 1-based number, the text (without its line break) and the
// start offset of the line of data holding byte off.
func lineOfOffset(data []byte, starts []int, off int) (int, []byte, int) {
	i := sort.Search(len(starts), func(i int) bool { return starts[i] > off }) - 1
	start := starts[i]
	end := len(data)
	if i+1 < len(starts) {
		end = starts[i+1] - 1
	}
	return i + 1, bytes.TrimSuffix(data[start:end], []byte("\r")), start
}
