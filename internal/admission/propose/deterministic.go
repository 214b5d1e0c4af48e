package propose

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxSkillMDBytes bounds how much of a SKILL.md the deterministic proposer
// scans for mentions: the largest SKILL.md package skill accepts. Bytes past
// it are ignored.
const MaxSkillMDBytes = 4 << 20

// Deterministic proposes from what the skill itself names, with no model:
//
//  1. every tool its allowed-tools list names, in any of the forms
//     mcp__server__tool, server/tool, server.tool, server:tool or a bare
//     tool name (a parenthesised argument pattern such as Bash(git:*) is
//     ignored), and whole servers as mcp__server, mcp__server__*, server/*
//     or server.*;
//  2. every tool its SKILL.md body mentions: a qualified name
//     (github/search_issues, mcp__github__search_issues, …) anywhere, or the
//     bare tool name as a whole word. A bare name that is a plain word
//     (letters only, no inner capital: "echo", "add") counts only inside
//     backticks, so prose does not select tools by accident;
//  3. when neither names a tool, every tool.
//
// Tools are matched exactly, case included. Each item's Reason says which
// rule picked it. The output is sorted and the same for the same input. The
// zero value is ready to use and safe for concurrent use.
type Deterministic struct{}

var _ Proposer = Deterministic{}

// Propose implements [Proposer]. It fails only when ctx is done.
func (Deterministic) Propose(ctx context.Context, in Input) (*Proposal, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("deterministic proposer: %w", err)
	}
	tools := inventory(in.Tools)
	m := newMatcher(tools)
	reasons := make(map[toolKey]string)

	for _, entry := range in.AllowedTools {
		for _, k := range m.allowed(entry) {
			if _, ok := reasons[k]; !ok {
				reasons[k] = "listed in allowed-tools as " + display(entry)
			}
		}
	}
	md := in.SkillMD
	if len(md) > MaxSkillMDBytes {
		md = md[:MaxSkillMDBytes]
	}
	for k, line := range m.mentions(md) {
		if _, ok := reasons[k]; !ok {
			reasons[k] = "mentioned in SKILL.md line " + strconv.Itoa(line)
		}
	}

	p := &Proposal{Proposer: ProposerDeterministic, Capabilities: []Item{}}
	for _, t := range tools {
		k := toolKey{t.ExtensionID, t.CapabilityID}
		reason, ok := reasons[k]
		if len(reasons) == 0 {
			reason, ok = "no tool named; all tools proposed", true
		}
		if ok {
			p.Capabilities = append(p.Capabilities, Item{ExtensionID: k.ext, CapabilityID: k.cap, Reason: reason})
		}
	}
	return p, nil
}

// matcher finds tool names in allowed-tools entries and SKILL.md text.
type matcher struct {
	// qualified maps every qualified spelling of a tool to it.
	qualified map[string][]toolKey
	// bare maps a tool name to the tools of that name.
	bare map[string][]toolKey
	// servers maps a whole-server allowed-tools form to its tools.
	servers map[string][]toolKey
}

func newMatcher(tools []Tool) *matcher {
	m := &matcher{
		qualified: make(map[string][]toolKey, 5*len(tools)),
		bare:      make(map[string][]toolKey, len(tools)),
		servers:   make(map[string][]toolKey),
	}
	for _, t := range tools {
		k := toolKey{t.ExtensionID, t.CapabilityID}
		for _, q := range []string{"mcp__" + k.ext + "__" + k.cap, k.ext + "/" + k.cap, k.ext + "." + k.cap, k.ext + ":" + k.cap} {
			m.qualified[q] = appendKey(m.qualified[q], k)
		}
		m.bare[k.cap] = appendKey(m.bare[k.cap], k)
		for _, s := range []string{"mcp__" + k.ext, "mcp__" + k.ext + "__*", k.ext + "/*", k.ext + ".*"} {
			m.servers[s] = appendKey(m.servers[s], k)
		}
	}
	return m
}

// appendKey appends k unless it is already last. Tools arrive sorted and
// distinct, so a key can only repeat right after itself; checking the last
// one keeps building linear for a server with many tools.
func appendKey(keys []toolKey, k toolKey) []toolKey {
	if n := len(keys); n > 0 && keys[n-1] == k {
		return keys
	}
	return append(keys, k)
}

// allowed returns the tools one allowed-tools entry names.
func (m *matcher) allowed(entry string) []toolKey {
	name := entry
	if i := strings.IndexByte(name, '('); i > 0 && strings.HasSuffix(name, ")") {
		name = name[:i]
	}
	if keys := m.servers[name]; keys != nil {
		return keys
	}
	if keys := m.qualified[name]; keys != nil {
		return keys
	}
	return m.bare[name]
}

// mentions returns the tools the body of md mentions, each with the 1-based
// line of its first mention. Frontmatter lines are skipped but counted.
func (m *matcher) mentions(md []byte) map[toolKey]int {
	found := make(map[toolKey]int)
	if len(m.bare) == 0 {
		return found
	}
	md = bytes.TrimPrefix(md, []byte("\xef\xbb\xbf"))
	lines := bytes.Split(md, []byte("\n"))
	start := bodyStart(lines)
	for i := start; i < len(lines); i++ {
		m.scanLine(lines[i], i+1, found)
	}
	return found
}

// bodyStart returns the index of the first body line: the line after the
// closing frontmatter delimiter, or 0 when there is no complete frontmatter.
func bodyStart(lines [][]byte) int {
	if len(lines) == 0 || string(bytes.TrimRight(lines[0], "\r")) != "---" {
		return 0
	}
	for i := 1; i < len(lines); i++ {
		l := string(bytes.TrimRight(lines[i], " \t\r"))
		if l == "---" || l == "..." {
			return i + 1
		}
	}
	return 0
}

// scanLine records the tools mentioned in one line.
func (m *matcher) scanLine(line []byte, n int, found map[toolKey]int) {
	record := func(keys []toolKey) bool {
		for _, k := range keys {
			if _, ok := found[k]; !ok {
				found[k] = n
			}
		}
		return len(keys) > 0
	}
	for i := 0; i < len(line); {
		if !isTokenByte(line[i]) {
			i++
			continue
		}
		j := i
		for j < len(line) && isTokenByte(line[j]) {
			j++
		}
		s, e := i, j
		for s < e && isEdgeByte(line[s]) {
			s++
		}
		for e > s && isEdgeByte(line[e-1]) {
			e--
		}
		i = j
		if s == e {
			continue
		}
		tok := string(line[s:e])
		ticked := s > 0 && line[s-1] == '`' && e < len(line) && line[e] == '`'
		if record(m.qualified[tok]) {
			continue
		}
		if record(m.bareMatch(tok, ticked)) {
			continue
		}
		// A path or a call such as docs/search_issues or client.search_issues:
		// its parts are words of their own.
		if strings.ContainsAny(tok, "./:") {
			for _, part := range strings.FieldsFunc(tok, func(r rune) bool { return r == '.' || r == '/' || r == ':' }) {
				record(m.bareMatch(part, ticked))
			}
		}
	}
}

// bareMatch returns the tools named tok, if tok may count as a mention.
func (m *matcher) bareMatch(tok string, ticked bool) []toolKey {
	keys := m.bare[tok]
	if keys == nil || (!ticked && plainWord(tok)) {
		return nil
	}
	return keys
}

// plainWord reports whether s could be an ordinary English word: letters
// only, with no capital after the first letter.
func plainWord(s string) bool {
	for i, r := range s {
		if !unicode.IsLetter(r) || (i > 0 && unicode.IsUpper(r)) {
			return false
		}
	}
	return true
}

// isTokenByte reports whether b can be part of a (qualified) tool name.
func isTokenByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' ||
		b == '_' || b == '-' || b == '.' || b == '/' || b == ':'
}

// isEdgeByte reports whether b is punctuation trimmed from a token's ends.
func isEdgeByte(b byte) bool { return b == '.' || b == '/' || b == ':' || b == '-' }

// display returns s as it can be shown in a reason: as is when it is short
// printable text, else quoted and shortened.
func display(s string) string {
	const max = 128
	clean := utf8.ValidString(s) && len(s) <= max
	if clean {
		for _, r := range s {
			if !unicode.IsGraphic(r) || unicode.IsSpace(r) {
				clean = false
				break
			}
		}
	}
	if clean {
		return s
	}
	if len(s) > max {
		s = truncateUTF8(s, max) + "…"
	}
	return strconv.Quote(s)
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
