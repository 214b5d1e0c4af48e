// Package textnorm normalises text before the content scanner's prose rules
// read it, so that a rule for "ignore all previous instructions" also
// matches the sentence written with a Cyrillic о, in fullwidth or
// mathematical bold letters, with a zero-width space or a soft hyphen
// inside a word, or with a word split by a hyphen at a line break (issue
// 31). It is pure (no I/O) and keeps a map from every byte of the
// normalised text back to the original, so that a finding is reported on
// the original line, and it records what it changed so that the finding
// can say what normalisation revealed.
//
// The steps, in order: invisible and format characters are removed (Unicode
// category Cf — zero-width space and joiners, U+00AD soft hyphen, bidi
// controls, tag characters, the byte-order mark — and variation selectors,
// the combining grapheme joiner and Hangul fillers); a word split by a
// hyphen or soft hyphen at a line break is joined; the text is put in NFKC
// (fullwidth and mathematical alphanumerics fold to ASCII); and in a word
// that mixes ASCII letters with letters that look like them (Unicode TR39
// confusables: Cyrillic о, Greek ο …) those letters are folded to their
// ASCII look-alike. A word with no ASCII letter is left as it is (a Russian
// or Japanese sentence is not an attack), unless, folded whole (look-alikes,
// small capitals, diacritics and combining marks removed), it is a word of
// the prose rules (prose.go): "ɪɢɴᴏʀᴇ", "ΙGΝΟRΕ", "prévious".
package textnorm

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Kind is what one change of the normaliser did.
type Kind int

// The kinds of change.
const (
	// Removed is an invisible or format character taken out.
	Removed Kind = iota + 1
	// Joined is a word joined across a hyphen (or soft hyphen) and a line
	// break; the change's Rune is the hyphen.
	Joined
	// Compat is a character NFKC replaced (fullwidth, mathematical,
	// ligature, no-break space …).
	Compat
	// LookAlike is a letter folded to the ASCII letter it looks like, in a
	// word that mixes it with ASCII letters.
	LookAlike
)

// Change is one change, at byte At of the original text.
type Change struct {
	Kind Kind
	At   int
	// Rune is the original character (for Compat, the first of its
	// segment).
	Rune rune
	// To is what it became ("" for Removed and Joined).
	To string
}

// Text is normalised text with its way back to the original.
type Text struct {
	// Text is the normalised text.
	Text string
	// offs[i] is the original byte offset of Text's byte i; offs has one
	// more element, the original length. Nil when Text is the original.
	offs []int
	// Changes are in the order of the original text.
	Changes []Change
}

// Changed reports whether normalisation changed anything.
func (t *Text) Changed() bool { return len(t.Changes) > 0 }

// Orig is the original byte offset of the normalised text's byte i (0 ≤ i ≤
// len(t.Text)).
func (t *Text) Orig(i int) int {
	if t.offs == nil {
		return i
	}
	return t.offs[i]
}

// ChangesIn are the changes at original offsets in [from, to).
func (t *Text) ChangesIn(from, to int) []Change {
	lo := sort.Search(len(t.Changes), func(i int) bool { return t.Changes[i].At >= from })
	hi := lo
	for hi < len(t.Changes) && t.Changes[hi].At < to {
		hi++
	}
	return t.Changes[lo:hi]
}

// Invisible reports whether the normaliser removes r: a format character
// (category Cf: zero-width space and joiners, soft hyphen, bidi controls,
// tag characters, the byte-order mark), a variation selector, the
// combining grapheme joiner or a Hangul filler.
func Invisible(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF, // variation selectors
		r == 0x034F, r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// Normalize normalises s (a line or a whole text). Pure-ASCII text without a
// hyphen at a line break is returned as it is, without allocating.
func Normalize(s string) Text {
	if isPlain(s) || !needsWork(s) {
		return Text{Text: s}
	}
	var b builder
	b.grow(len(s))
	removeAndJoin(&b, s)
	if !isASCII(b.out) && !norm.NFKC.IsNormal(b.out) {
		b = compat(b)
	}
	b = lookAlikes(b)
	b.offs = append(b.offs, len(s))
	sort.SliceStable(b.changes, func(i, j int) bool { return b.changes[i].At < b.changes[j].At })
	return Text{Text: string(b.out), offs: b.offs, Changes: b.changes}
}

// Plain reports whether s is ASCII with no hyphen right before a line
// break: Normalize would return it unchanged. It lets a caller holding
// bytes skip the conversion to a string.
func Plain[T string | []byte](s T) bool { return isPlain(s) }

// isPlain is Plain.
func isPlain[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return false
		}
		if c == '\n' && i > 0 && hyphenBefore(s, i) {
			return false
		}
	}
	return true
}

// needsWork reports whether s holds anything Normalize would change: an
// invisible character, a letter with an ASCII look-alike, a hyphen at a line
// break, or text not in NFKC. Most non-ASCII text of skills (dashes, arrows,
// emoji) holds none, and is returned as it is after this one pass.
func needsWork(s string) bool {
	for i, r := range s {
		switch {
		case r == '\n':
			if i > 0 && hyphenBefore(s, i) {
				return true
			}
		case r < utf8.RuneSelf:
		case Invisible(r):
			return true
		case foldable(r) || unicode.Is(unicode.Mn, r):
			return true // a word of the prose rules may be written with it (proseFold)
		default:
			if _, ok := confusable(r); ok {
				return true
			}
		}
	}
	return !norm.NFKC.IsNormalString(s)
}

// hyphenBefore reports whether a '-' precedes the line break at s[i], with
// only spaces, tabs or a carriage return between.
func hyphenBefore[T string | []byte](s T, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch s[j] {
		case ' ', '\t', '\r':
			continue
		case '-':
			return true
		}
		return false
	}
	return false
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// builder is normalised text under construction: out, and for each of its
// bytes the original offset.
type builder struct {
	out     []byte
	offs    []int
	changes []Change
}

func (b *builder) grow(n int) {
	b.out = make([]byte, 0, n)
	b.offs = make([]int, 0, n+1)
}

func (b *builder) add(p string, orig int) {
	b.out = append(b.out, p...)
	for range len(p) {
		b.offs = append(b.offs, orig)
	}
}

// lastRune is the last rune written, or utf8.RuneError.
func (b *builder) lastRune() rune {
	r, _ := utf8.DecodeLastRune(b.out)
	return r
}

// removeAndJoin copies s to b without invisible characters, joining a word
// split by a hyphen or soft hyphen at a line break ("instruc-\ntions").
func removeAndJoin(b *builder, s string) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '-' || r == 0xAD {
			if next, ok := joinAt(s, i+size); ok && unicode.IsLetter(b.lastRune()) {
				b.changes = append(b.changes, Change{Kind: Joined, At: i, Rune: r})
				i = next
				continue
			}
		}
		if Invisible(r) {
			b.changes = append(b.changes, Change{Kind: Removed, At: i, Rune: r})
			i += size
			continue
		}
		for j := range size {
			b.out = append(b.out, s[i+j])
			b.offs = append(b.offs, i+j)
		}
		i += size
	}
}

// joinAt reports whether s from i is a line break (spaces, tabs and a
// carriage return around it) followed by a lower-case letter, and where that
// letter starts.
func joinAt(s string, i int) (int, bool) {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	if i >= len(s) || s[i] != '\n' {
		return 0, false
	}
	i++
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return i, unicode.IsLower(r)
}

// compat puts in's text in NFKC, segment by segment: a segment NFKC leaves
// alone keeps its byte map, a changed one maps every byte to its start.
func compat(in builder) builder {
	var out builder
	out.grow(len(in.out))
	out.changes = in.changes
	var it norm.Iter
	it.Init(norm.NFKC, in.out)
	for !it.Done() {
		start := it.Pos()
		seg := it.Next()
		end := it.Pos()
		if string(seg) == string(in.out[start:end]) {
			out.out = append(out.out, seg...)
			out.offs = append(out.offs, in.offs[start:end]...)
			continue
		}
		r, _ := utf8.DecodeRune(in.out[start:end])
		out.changes = append(out.changes, Change{Kind: Compat, At: in.offs[start], Rune: r, To: string(seg)})
		out.add(string(seg), in.offs[start])
	}
	return out
}

// lookAlikes folds, in each word that holds an ASCII letter, the letters
// that look like an ASCII letter (TR39 confusables) to it.
func lookAlikes(b builder) builder {
	s := b.out
	if isASCII(s) {
		return b
	}
	var out builder
	copied := -1 // how much of s out holds; -1: nothing folded yet
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		if !wordRune(r) {
			i += size
			continue
		}
		j, ascii, other, rest := i, false, false, false
		for j < len(s) {
			r, n := utf8.DecodeRune(s[j:])
			if !wordRune(r) {
				break
			}
			if r < utf8.RuneSelf && unicode.IsLetter(r) {
				ascii = true
			} else if _, ok := confusable(r); ok {
				other = true
			} else if r >= utf8.RuneSelf {
				rest = true
			}
			j += n
		}
		prose := false
		if other || rest {
			_, prose = proseFold(s, i, j)
		}
		if !prose && (!ascii || !other) {
			i = j
			continue
		}
		if copied < 0 {
			out.grow(len(s))
			copied = 0
		}
		out.out = append(out.out, s[copied:i]...)
		out.offs = append(out.offs, b.offs[copied:i]...)
		for i < j {
			r, n := utf8.DecodeRune(s[i:])
			if c, drop, _ := foldLetter(r); prose && r >= utf8.RuneSelf {
				// a prose word folded whole: look-alikes, small capitals, diacritics
				to := ""
				if !drop {
					to = string(rune(c))
					out.out = append(out.out, c)
					out.offs = append(out.offs, b.offs[i])
				}
				b.changes = append(b.changes, Change{Kind: LookAlike, At: b.offs[i], Rune: r, To: to})
			} else if c, ok := confusable(r); ok {
				b.changes = append(b.changes, Change{Kind: LookAlike, At: b.offs[i], Rune: r, To: string(rune(c))})
				out.out = append(out.out, c)
				out.offs = append(out.offs, b.offs[i])
			} else {
				out.out = append(out.out, s[i:i+n]...)
				out.offs = append(out.offs, b.offs[i:i+n]...)
			}
			i += n
		}
		copied = j
	}
	if copied < 0 {
		return b
	}
	out.out = append(out.out, s[copied:]...)
	out.offs = append(out.offs, b.offs[copied:]...)
	out.changes = b.changes
	return out
}

func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// confusable is the ASCII letter or digit r looks like.
func confusable(r rune) (byte, bool) {
	if r < utf8.RuneSelf {
		return 0, false
	}
	i := sort.Search(len(confusableRunes), func(i int) bool { return confusableRunes[i] >= r })
	if i < len(confusableRunes) && confusableRunes[i] == r {
		return confusableASCII[i], true
	}
	return 0, false
}

// Describe says in words what changes did, for a finding's message:
// "folding look-alike letters (Cyrillic о U+043E) and removing U+200B".
func Describe(changes []Change) string {
	var removed, joined, compatCh, alike []string
	seen := map[string]bool{}
	note := func(list *[]string, s string) {
		if !seen[s] && len(*list) < 3 {
			*list = append(*list, s)
		}
		seen[s] = true
	}
	for _, c := range changes {
		switch c.Kind {
		case Removed:
			note(&removed, fmt.Sprintf("U+%04X", c.Rune))
		case Joined:
			note(&joined, "a word split by a hyphen at a line break")
			if c.Rune == 0xAD {
				note(&joined, "a word split by a soft hyphen at a line break")
				joined = joined[len(joined)-1:]
			}
		case Compat:
			note(&compatCh, fmt.Sprintf("%s %c U+%04X", compatName(c.Rune), c.Rune, c.Rune))
		case LookAlike:
			note(&alike, fmt.Sprintf("%s %c U+%04X", ScriptOf(c.Rune), c.Rune, c.Rune))
		}
	}
	var parts []string
	if len(alike) > 0 {
		parts = append(parts, "folding look-alike letters ("+strings.Join(alike, ", ")+")")
	}
	if len(compatCh) > 0 {
		parts = append(parts, "folding compatibility characters ("+strings.Join(compatCh, ", ")+")")
	}
	if len(removed) > 0 {
		parts = append(parts, "removing "+strings.Join(removed, ", "))
	}
	if len(joined) > 0 {
		parts = append(parts, "joining "+joined[0])
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func compatName(r rune) string {
	switch {
	case r >= 0xFF00 && r <= 0xFFEF:
		return "fullwidth"
	case r >= 0x1D400 && r <= 0x1D7FF:
		return "mathematical"
	}
	return "compatibility"
}

// commonScripts are looked at first by ScriptOf.
var commonScripts = []string{"Latin", "Cyrillic", "Greek", "Armenian", "Cherokee", "Coptic", "Georgian", "Lisu", "Hebrew", "Arabic"}

// ScriptOf is the name of r's Unicode script ("Cyrillic"), or "" for a
// character of no one script.
func ScriptOf(r rune) string {
	for _, name := range commonScripts {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	names := make([]string, 0, len(unicode.Scripts))
	for name := range unicode.Scripts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name != "Common" && name != "Inherited" && unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	return ""
}
