package main

import (
	"errors"
	"fmt"
)

// tokKind is the kind of one token of the prototype tokenizers.
type tokKind uint8

const (
	tokName tokKind = iota
	tokNumber
	tokString
	tokComment
	tokOp
	tokRegexp
	tokTemplate
)

// token is one token: its kind, its first line and its text.
type token struct {
	kind tokKind
	line int
	text string
}

// errUnterminated and errUnbalanced are the two ways a prototype tokenizer fails:
// a string, comment or template that does not end, or brackets that do not match.
var (
	errUnterminated = errors.New("unterminated string or comment")
	errUnbalanced   = errors.New("unbalanced brackets")
)

// tokenizePython splits Python source into names, numbers, strings (with their
// prefixes r, b, u, f and their triple-quoted forms), comments and operators.
// It is the hand-written candidate the benchmark measures against gpython's
// parser: it understands where strings and comments start and end, which is
// what rules need to not match inside them, and nothing of the grammar.
func tokenizePython(src []byte) ([]token, error) {
	toks := make([]token, 0, len(src)/4)
	line := 1
	var stack []byte
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			line++
			i += 2
		case c == '#':
			j := i
			for j < len(src) && src[j] != '\n' {
				j++
			}
			toks = append(toks, token{tokComment, line, string(src[i:j])})
			i = j
		case isPyStringStart(src, i):
			j, lines, err := scanPyString(src, i)
			if err != nil {
				return toks, fmt.Errorf("line %d: %w", line, err)
			}
			toks = append(toks, token{tokString, line, string(src[i:j])})
			line += lines
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			toks = append(toks, token{tokName, line, string(src[i:j])})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			for j < len(src) && (isIdentPart(src[j]) || src[j] == '.' ||
				(src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			toks = append(toks, token{tokNumber, line, string(src[i:j])})
			i = j
		default:
			switch c {
			case '(', '[', '{':
				stack = append(stack, c)
			case ')', ']', '}':
				if len(stack) == 0 || stack[len(stack)-1] != openerOf(c) {
					return toks, fmt.Errorf("line %d: %w", line, errUnbalanced)
				}
				stack = stack[:len(stack)-1]
			}
			toks = append(toks, token{tokOp, line, string(src[i : i+1])})
			i++
		}
	}
	if len(stack) != 0 {
		return toks, fmt.Errorf("at end: %w", errUnbalanced)
	}
	return toks, nil
}

// isPyStringStart reports whether a string literal, with an optional prefix of
// at most two letters among r, b, u, f, starts at src[i].
func isPyStringStart(src []byte, i int) bool {
	if i > 0 && isIdentPart(src[i-1]) {
		return false
	}
	for k := 0; k < 3 && i+k < len(src); k++ {
		switch src[i+k] {
		case '\'', '"':
			return true
		case 'r', 'R', 'b', 'B', 'u', 'U', 'f', 'F':
			continue
		default:
			return false
		}
	}
	return false
}

// scanPyString returns the end of the string literal starting at src[i] and
// the newlines inside it. An f-string's replacement fields may hold other
// strings (Python 3.12 allows the same quote there), which are skipped whole.
func scanPyString(src []byte, i int) (end, lines int, err error) {
	fstring := false
	for src[i] != '\'' && src[i] != '"' {
		if src[i] == 'f' || src[i] == 'F' {
			fstring = true
		}
		i++
	}
	q := src[i]
	triple := i+2 < len(src) && src[i+1] == q && src[i+2] == q
	if triple {
		i += 3
	} else {
		i++
	}
	depth := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\\':
			if i+1 < len(src) && src[i+1] == '\n' {
				lines++
			}
			i += 2
			continue
		case c == '\n':
			if !triple && depth == 0 {
				return i, lines, errUnterminated
			}
			lines++
		case fstring && c == '{':
			if depth == 0 && i+1 < len(src) && src[i+1] == '{' {
				i += 2
				continue
			}
			depth++
		case fstring && c == '}' && depth > 0:
			depth--
		case depth > 0 && (c == '\'' || c == '"') && c != q:
			j, l, err := scanPyString(src, i)
			if err != nil {
				return j, lines + l, err
			}
			lines += l
			i = j
			continue
		case c == q && depth == 0:
			if !triple {
				return i + 1, lines, nil
			}
			if i+2 < len(src) && src[i+1] == q && src[i+2] == q {
				return i + 3, lines, nil
			}
		}
		i++
	}
	return i, lines, errUnterminated
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func openerOf(c byte) byte {
	switch c {
	case ')':
		return '('
	case ']':
		return '['
	default:
		return '{'
	}
}
