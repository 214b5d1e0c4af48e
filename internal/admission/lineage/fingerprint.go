package lineage

import (
	"bytes"
	"slices"
	"unicode"
	"unicode/utf8"
)

// Winnowing parameters: a fingerprint is the hash of K consecutive
// normalised tokens, and one is kept per window of W of those hashes (the
// smallest), so any shared run of K+W-1 tokens shares a fingerprint.
const (
	gramTokens = 5
	window     = 4
)

// Fingerprints returns the winnowed fingerprints of src's normalised
// tokens, deduplicated, sorted and at most max of them (the smallest
// values: a bottom-k sample, so two copies of a file keep the same ones).
// Tokens are identifiers, numbers and single punctuation characters;
// whitespace, line breaks and line comments (#, //, --, ;, and a leading
// shebang) are dropped, so a re-indented or re-commented copy matches.
func Fingerprints(src []byte, max int) []uint64 {
	toks := tokens(src)
	if len(toks) < gramTokens {
		if len(toks) == 0 {
			return nil
		}
		return []uint64{gram(toks)}
	}
	grams := make([]uint64, 0, len(toks)-gramTokens+1)
	for i := 0; i+gramTokens <= len(toks); i++ {
		grams = append(grams, gram(toks[i:i+gramTokens]))
	}
	seen := make(map[uint64]struct{}, len(grams)/2)
	out := make([]uint64, 0, len(grams)/2)
	keep := func(h uint64) {
		if _, ok := seen[h]; !ok {
			seen[h] = struct{}{}
			out = append(out, h)
		}
	}
	if len(grams) <= window {
		keep(slices.Min(grams))
	}
	for i := 0; i+window <= len(grams); i++ {
		keep(slices.Min(grams[i : i+window]))
	}
	slices.Sort(out)
	if max > 0 && len(out) > max {
		out = out[:max]
	}
	return out
}

// gram hashes a run of token hashes.
func gram(toks []uint64) uint64 {
	h := uint64(14695981039346656037)
	for _, t := range toks {
		h ^= t
		h *= 1099511628211
		h = h<<29 | h>>35
	}
	return h
}

// tokens splits src into the hashes of its normalised tokens.
func tokens(src []byte) []uint64 {
	var out []uint64
	first := true
	for line := range bytes.Lines(src) {
		line = bytes.TrimSpace(line)
		if first && bytes.HasPrefix(line, []byte("#!")) {
			first = false
			continue
		}
		first = false
		if isComment(line) {
			continue
		}
		for len(line) > 0 {
			r, n := utf8.DecodeRune(line)
			switch {
			case unicode.IsSpace(r):
				line = line[n:]
			case r < utf8.RuneSelf && !isWordByte(byte(r)) && r != ' ' && r != '\t':
				out = append(out, hashBytes(line[:1]))
				line = line[1:]
			case isWord(r):
				end := n
				for end < len(line) {
					r2, n2 := utf8.DecodeRune(line[end:])
					if !isWord(r2) {
						break
					}
					end += n2
				}
				out = append(out, hashBytes(line[:end]))
				line = line[end:]
			default:
				out = append(out, hashBytes(line[:n]))
				line = line[n:]
			}
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// isComment reports whether a trimmed line is a line comment in the
// languages skills use (shell, Python, YAML: #; JS, Go, C: //; SQL, Lua:
// --; ini: ;). A Markdown heading is a comment too: it is dropped, which
// costs little, since a heading is a few words.
func isComment(line []byte) bool {
	return bytes.HasPrefix(line, []byte("#")) || bytes.HasPrefix(line, []byte("//")) ||
		bytes.HasPrefix(line, []byte("--")) || bytes.HasPrefix(line, []byte(";"))
}

// hashBytes is FNV-1a, inline: a token costs no allocation.
func hashBytes(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
