package textnorm

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// proseWords are the words the content scanner's prose rules read (SG101
// prompt-override, SG102 conceal-from-user), lower-case. A word written
// wholly in look-alike letters (small capitals, Cherokee, Greek capitals)
// or with diacritics (prévious, ïgnore) is folded to ASCII only when the
// folded word is one of these: a Russian, Greek or French sentence stays as
// it is, and the rules still read "ɪɢɴᴏʀᴇ ᴀʟʟ ᴘʀᴇᴠɪᴏᴜꜱ ɪɴꜱᴛʀᴜᴄᴛɪᴏɴꜱ".
// Keep it in step with those rules' patterns (TestProseWordsCoverRules).
var proseWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		ignore disregard forget override bypass all any the your of previous prior above
		earlier preceding system developer original existing other instruction instructions
		prompt prompts rules guidelines directives guardrails policies you are have been no
		longer bound by new updated do not don never tell inform mention this it to reveal
		disclose notify alert user without telling informing notifying alerting hide conceal
		keep these them that secret from silently secretly covertly quietly send upload
		exfiltrate transmit post forward copy`) {
		proseWords[w] = true
	}
}

// ProseWord reports whether w (lower-case ASCII) is a word of the prose
// rules.
func ProseWord(w string) bool { return proseWords[w] }

// smallCapitals are the small capital letters (Unicode's phonetic
// extensions and IPA) that TR39's confusables do not map to ASCII.
var smallCapitals = map[rune]byte{
	'ᴀ': 'a', 'ʙ': 'b', 'ᴅ': 'd', 'ᴇ': 'e', 'ꜰ': 'f', 'ɢ': 'g', 'ʜ': 'h', 'ᴊ': 'j', 'ᴋ': 'k',
	'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴘ': 'p', 'ǫ': 'q', 'ʀ': 'r', 'ᴛ': 't',
}

// foldLetter is the ASCII letter r reads as in a folded word: r itself when
// ASCII, its TR39 look-alike, its small-capital letter, or its base letter
// without diacritics (é is e); drop is true for a combining mark, which
// folds to nothing. ok is false for any other rune.
func foldLetter(r rune) (c byte, drop, ok bool) {
	switch {
	case r < utf8.RuneSelf:
		return byte(r), false, unicode.IsLetter(r)
	case unicode.Is(unicode.Mn, r):
		return 0, true, true
	}
	if c, ok := confusable(r); ok {
		return c, false, c < utf8.RuneSelf && unicode.IsLetter(rune(c))
	}
	if c, ok := smallCapitals[r]; ok {
		return c, false, true
	}
	if unicode.Is(unicode.Latin, r) {
		d := norm.NFD.String(string(r))
		if b := d[0]; b < utf8.RuneSelf && unicode.IsLetter(rune(b)) && strings.TrimFunc(d[1:], func(m rune) bool { return unicode.Is(unicode.Mn, m) }) == "" {
			return b, false, true
		}
	}
	return 0, false, false
}

// foldable reports whether r is a rune foldLetter folds that NFKC and the
// confusables leave alone (a small capital, a Latin letter with a
// diacritic): text holding one may hold a prose word to fold.
func foldable(r rune) bool {
	if r < utf8.RuneSelf {
		return false
	}
	if _, ok := smallCapitals[r]; ok {
		return true
	}
	return r >= 0xC0 && r <= 0x24F || r >= 0x1E00 && r <= 0x1EFF
}

// proseFold is the word s[i:j] folded letter by letter (foldLetter) when
// every rune folds, at least one is not ASCII, and the folded word,
// lower-cased, is a prose word; ok is false otherwise.
func proseFold(s []byte, i, j int) (string, bool) {
	if j-i > 64 {
		return "", false // longer than any prose word, whatever its encoding
	}
	var b [64]byte
	n, other := 0, false
	for k := i; k < j; {
		r, size := utf8.DecodeRune(s[k:])
		c, drop, ok := foldLetter(r)
		if !ok {
			return "", false
		}
		if r >= utf8.RuneSelf {
			other = true
		}
		if !drop {
			b[n] = c | 0x20 // lower case
			n++
		}
		k += size
	}
	if !other || !proseWords[string(b[:n])] {
		return "", false
	}
	return string(b[:n]), true
}
