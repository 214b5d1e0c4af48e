package skill

import (
	"strings"
	"unicode/utf8"
)

// fastYAML parses the frontmatter most skills have without the YAML
// library, which costs more than everything else a scan does per skill. It
// understands a deliberately small subset of block YAML:
//
//   - mappings whose keys are plain words ([A-Za-z0-9_] then also '-' and
//     '.') followed by ": " or ":" at the end of the line;
//   - values that are one-line plain scalars, one-line single-quoted
//     scalars, one-line double-quoted scalars without escapes, block
//     scalars introduced by ">", ">-", "|" or "|-" whose lines all share
//     one indentation, nested mappings, and block sequences of one-line
//     scalars;
//   - spaces for indentation, no tabs, no blank or comment lines, no
//     anchors, aliases, tags, flow collections or directives.
//
// The values are substrings of text (splitDocument gives the frontmatter
// its own memory, so they do not keep the whole file alive).
//
// ok is false as soon as the text uses anything else, and also for the
// shapes the YAML library rejects (duplicate keys, a plain value holding
// ": "), so the caller falls back to the library, which then decides and
// words the error. When ok is true the result is exactly what the library
// path of parseYAML returns, in both modes: the subset holds nothing
// StrictYAML refuses. FuzzFastYAML and TestFastYAMLCorpus check that.
func fastYAML(text string) (m *Map, ok bool) {
	if text == "" || text[len(text)-1] != '\n' || !fastYAMLChars(text) {
		return nil, false
	}
	p := fastParser{lines: strings.Split(text[:len(text)-1], "\n")}
	m, ok = p.mapping(0)
	if !ok || p.i != len(p.lines) {
		return nil, false
	}
	return m, true
}

// fastYAMLChars reports whether text holds only characters that the YAML
// library reads as ordinary printable text: no tabs, no control characters,
// and none of the Unicode line breaks (U+0085, U+2028, U+2029) or the
// byte-order mark, which it treats specially.
func fastYAMLChars(text string) bool {
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && n <= 1,
			r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff,
			r >= 0xd800 && r < 0xe000, r == 0xfffe, r == 0xffff:
			return false
		}
		i += n
	}
	return true
}

// fastParser walks the lines of a frontmatter for fastYAML.
type fastParser struct {
	lines []string
	i     int // the next line to read
	nodes int // values made so far, bounded like the library path
}

// maxFastNodes keeps the fast path well inside maxYAMLNodes.
const maxFastNodes = 1000

// indentOf returns the number of leading spaces of line, or -1 when the
// line is blank (blank lines are left to the library).
func indentOf(line string) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	if n == len(line) {
		return -1
	}
	return n
}

// count accounts for one more value.
func (p *fastParser) count() bool {
	p.nodes++
	return p.nodes <= maxFastNodes
}

// mapping parses a block mapping whose keys are indented by indent spaces,
// starting at the current line, up to the first line indented less.
func (p *fastParser) mapping(indent int) (*Map, bool) {
	m := &Map{Values: map[string]any{}}
	childCol := -1 // indentation of the first nested mapping (StrictYAML wants all equal)
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		ind := indentOf(line)
		if ind < 0 || ind > indent {
			return nil, false
		}
		if ind < indent {
			break
		}
		key, rest, ok := splitKey(line[ind:])
		if !ok || !p.count() {
			return nil, false
		}
		if _, dup := m.Values[key]; dup {
			return nil, false
		}
		p.i++
		var v any
		if rest == "" {
			v, ok = p.block(indent, &childCol)
		} else {
			v, ok = p.inline(rest, indent)
		}
		if !ok {
			return nil, false
		}
		m.Keys = append(m.Keys, key)
		m.Values[key] = v
	}
	if len(m.Keys) == 0 {
		return nil, false
	}
	return m, true
}

// block parses the value of a key written with nothing after its colon: a
// nested mapping, a block sequence, or nothing (an empty value, "").
func (p *fastParser) block(indent int, childCol *int) (any, bool) {
	if !p.count() {
		return nil, false
	}
	if p.i >= len(p.lines) {
		return "", true
	}
	next := p.lines[p.i]
	ind := indentOf(next)
	switch {
	case ind < 0:
		return nil, false
	case ind >= indent && isSeqItem(next[ind:]):
		return p.sequence(ind)
	case ind > indent:
		if *childCol >= 0 && *childCol != ind {
			return nil, false
		}
		*childCol = ind
		return p.mapping(ind)
	}
	return "", true
}

// isSeqItem reports whether s (a line without its indentation) starts a
// block sequence entry.
func isSeqItem(s string) bool {
	return s == "-" || strings.HasPrefix(s, "- ")
}

// sequence parses a block sequence of one-line scalars whose dashes are
// indented by indent spaces.
func (p *fastParser) sequence(indent int) ([]any, bool) {
	out := make([]any, 0, 4)
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		ind := indentOf(line)
		if ind < 0 || ind > indent {
			return nil, false
		}
		if ind < indent || !isSeqItem(line[ind:]) {
			break
		}
		item := strings.TrimLeft(line[ind+1:], " ")
		if item == "" || item[0] == '>' || item[0] == '|' || !p.count() {
			return nil, false
		}
		p.i++
		v, ok := p.inline(item, indent)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// splitKey splits "key: rest" or "key:" into the key and the value text
// with its leading spaces removed.
func splitKey(s string) (key, rest string, ok bool) {
	n := 0
	for n < len(s) && isKeyByte(s[n], n == 0) {
		n++
	}
	// The YAML library refuses a key longer than 1,024 characters.
	if n == 0 || n > 256 || n >= len(s) || s[n] != ':' {
		return "", "", false
	}
	key, s = s[:n], s[n+1:]
	if s == "" {
		return key, "", true
	}
	if s[0] != ' ' {
		return "", "", false
	}
	rest = strings.TrimLeft(s, " ")
	return key, rest, true
}

func isKeyByte(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		return true
	case c == '-' || c == '.':
		return !first
	}
	return false
}

// inline parses a value that starts on its key's (or dash's) line: s is
// the rest of that line without leading spaces; indent is the indentation
// of the key or dash. The next line must not continue the value.
func (p *fastParser) inline(s string, indent int) (any, bool) {
	var v string
	switch s[0] {
	case '"':
		end := strings.IndexByte(s[1:], '"')
		if end < 0 || strings.IndexByte(s[1:1+end], '\\') >= 0 || !onlySpaces(s[2+end:]) {
			return nil, false
		}
		v = s[1 : 1+end]
	case '\'':
		var b strings.Builder
		j := 1
		for {
			k := strings.IndexByte(s[j:], '\'')
			if k < 0 {
				return nil, false
			}
			b.WriteString(s[j : j+k])
			j += k + 1
			if j < len(s) && s[j] == '\'' {
				b.WriteByte('\'')
				j++
				continue
			}
			break
		}
		if !onlySpaces(s[j:]) {
			return nil, false
		}
		v = b.String()
	case '>', '|':
		return p.blockScalar(s, indent)
	default:
		v = strings.TrimRight(s, " ")
		if !plainOK(v) {
			return nil, false
		}
	}
	// A following line indented more than the key would continue the
	// scalar (or be an error); either way, the library decides.
	if p.i < len(p.lines) && indentOf(p.lines[p.i]) > indent {
		return nil, false
	}
	return v, true
}

func onlySpaces(s string) bool { return strings.TrimLeft(s, " ") == "" }

// plainOK reports whether s can be read as a one-line plain scalar that
// means exactly its text: it starts with no indicator character and holds
// nothing that would end it early (": ", " #", a final ':').
func plainOK(s string) bool {
	if s == "" || strings.IndexByte("-?:,[]{}#&*!|>'\"%@`", s[0]) >= 0 {
		return false
	}
	return !strings.Contains(s, ": ") && !strings.Contains(s, " #") && s[len(s)-1] != ':'
}

// blockScalar parses a literal ("|", "|-") or folded (">", ">-") scalar
// whose content lines all have the same indentation, deeper than indent,
// with no blank line and no trailing space. header is the indicator line's
// value text.
func (p *fastParser) blockScalar(header string, indent int) (any, bool) {
	h := strings.TrimRight(header, " ")
	var literal, strip bool
	switch h {
	case "|":
		literal = true
	case "|-":
		literal, strip = true, true
	case ">":
	case ">-":
		strip = true
	default:
		return nil, false
	}
	start := p.i
	col := -1
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		ind := indentOf(line)
		if ind < 0 {
			return nil, false
		}
		if ind <= indent {
			break
		}
		if col < 0 {
			col = ind
		}
		if ind != col || line[len(line)-1] == ' ' {
			return nil, false
		}
		p.i++
	}
	if col < 0 {
		return nil, false
	}
	sep := " "
	if literal {
		sep = "\n"
	}
	var b strings.Builder
	for k, line := range p.lines[start:p.i] {
		if k > 0 {
			b.WriteString(sep)
		}
		b.WriteString(line[col:])
	}
	if !strip {
		b.WriteByte('\n')
	}
	return b.String(), true
}
