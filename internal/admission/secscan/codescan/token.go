// Package codescan reads Python and JavaScript source for the content
// scanner (issue 31): hand-written tokenizers that know where strings,
// comments, f-strings, template literals and regular expression literals
// start and end, a small per-file taint analysis over their tokens (Analyze:
// a name bound to a network read, a decoded constant or a file outside the
// skill, flowing into a program start, an eval or a network send), and the
// capabilities each line of a script uses (Capabilities), which the lineage
// work uses to judge the lines added to a known skill's script.
//
// The tokenizers are not parsers: a real parser (gpython, goja) read 3 of
// the public corpus's 196 Python files and 4 of its 12 JavaScript files
// (bench/parsebench), the tokenizers all of them. They run in time linear in
// their input, with bounded nesting, whatever the input: it is a third
// party's.
package codescan

import (
	"errors"
	"fmt"
)

// Lang is the language a source file is read as.
type Lang uint8

// The languages.
const (
	// Python is Python 3 source (f-strings as in 3.12).
	Python Lang = iota + 1
	// JavaScript is JavaScript or TypeScript source (ES modules, JSX not).
	JavaScript
)

// String names the language.
func (l Lang) String() string {
	switch l {
	case Python:
		return "python"
	case JavaScript:
		return "javascript"
	}
	return "unknown"
}

// TokKind is the kind of one token.
type TokKind uint8

// The kinds of token.
const (
	// Name is an identifier or keyword.
	Name TokKind = iota + 1
	// Number is a numeric literal.
	Number
	// String is a string literal with its prefix (r, b, f …) and quotes.
	String
	// Comment is a comment, with its # or // or /* */.
	Comment
	// Op is one character of punctuation or operator.
	Op
	// Regexp is a JavaScript regular expression literal with its flags.
	Regexp
	// Template is one piece of a JavaScript template literal: from ` or }
	// to ${ or the closing `; the substitutions between are code tokens.
	Template
	// Newline ends a logical line: a line break outside brackets (and,
	// in Python, not after a backslash continuation).
	Newline
)

// Token is one token: its kind, its first line (1-based), the byte column
// of its start in that line (0-based) and its text.
type Token struct {
	Kind TokKind
	Line int
	Col  int
	Text string
}

// Errors of the tokenizers. The tokens before the error are returned with
// it: a file that does not tokenize is still read as far as it goes.
var (
	// ErrUnterminated is a string, comment, template or regular expression
	// literal that does not end.
	ErrUnterminated = errors.New("codescan: unterminated string or comment")
	// ErrUnbalanced is a closing bracket that does not match, or brackets
	// left open at the end.
	ErrUnbalanced = errors.New("codescan: unbalanced brackets")
	// ErrTooDeep is brackets, f-strings or template substitutions nested
	// deeper than MaxDepth.
	ErrTooDeep = errors.New("codescan: nested too deep")
)

// MaxDepth bounds the nesting of brackets, f-string replacement fields and
// template substitutions the tokenizers follow: hostile input cannot make
// them recurse or stack without bound.
const MaxDepth = 512

// Tokenize splits src into tokens of lang (Python or JavaScript).
func Tokenize(lang Lang, src []byte) ([]Token, error) {
	if lang == JavaScript {
		return TokenizeJS(src)
	}
	return TokenizePython(src)
}

// lexer holds what both tokenizers track: the tokens so far, the line and
// the offset where it starts.
type lexer struct {
	src       []byte
	toks      []Token
	line      int
	lineStart int
}

func (lx *lexer) emit(k TokKind, start, end, line, lineStart int) {
	lx.toks = append(lx.toks, Token{Kind: k, Line: line, Col: start - lineStart, Text: string(lx.src[start:end])})
}

// newline records a line break at offset i.
func (lx *lexer) newline(i int) {
	lx.line++
	lx.lineStart = i + 1
}

func (lx *lexer) fail(err error) ([]Token, error) {
	return lx.toks, fmt.Errorf("line %d: %w", lx.line, err)
}

// TokenizePython splits Python source into names, numbers, strings (with
// their prefixes r, b, u, f and their triple-quoted forms), comments,
// operators and logical line ends. A backslash before a line break joins the
// lines; a line break inside brackets does not end the logical line.
func TokenizePython(src []byte) ([]Token, error) {
	lx := &lexer{src: src, toks: make([]Token, 0, len(src)/4), line: 1}
	var stack []byte
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			if len(stack) == 0 && len(lx.toks) > 0 && lx.toks[len(lx.toks)-1].Kind != Newline {
				lx.emit(Newline, i, i+1, lx.line, lx.lineStart)
			}
			lx.newline(i)
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			lx.newline(i + 1)
			i += 2
		case c == '\\' && i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n':
			lx.newline(i + 2)
			i += 3
		case c == '#':
			j := i
			for j < len(src) && src[j] != '\n' {
				j++
			}
			lx.emit(Comment, i, j, lx.line, lx.lineStart)
			i = j
		case isPyStringStart(src, i):
			line, ls := lx.line, lx.lineStart
			j, err := lx.scanPyString(i, 0)
			if err != nil {
				return lx.fail(err)
			}
			lx.emit(String, i, j, line, ls)
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			lx.emit(Name, i, j, lx.line, lx.lineStart)
			i = j
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			j := scanNumber(src, i)
			lx.emit(Number, i, j, lx.line, lx.lineStart)
			i = j
		default:
			switch c {
			case '(', '[', '{':
				if len(stack) >= MaxDepth {
					return lx.fail(ErrTooDeep)
				}
				stack = append(stack, c)
			case ')', ']', '}':
				if len(stack) == 0 || stack[len(stack)-1] != openerOf(c) {
					return lx.fail(ErrUnbalanced)
				}
				stack = stack[:len(stack)-1]
			}
			lx.emit(Op, i, i+1, lx.line, lx.lineStart)
			i++
		}
	}
	if len(lx.toks) > 0 && lx.toks[len(lx.toks)-1].Kind != Newline {
		lx.emit(Newline, len(src), len(src), lx.line, lx.lineStart)
	}
	if len(stack) != 0 {
		return lx.toks, fmt.Errorf("at end: %w", ErrUnbalanced)
	}
	return lx.toks, nil
}

// isPyStringStart reports whether a string literal, with an optional prefix
// of at most two letters among r, b, u, f, starts at src[i].
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

// scanPyString returns the end of the string literal starting at src[i],
// counting its line breaks into lx. An f-string's replacement fields may
// hold other strings (Python 3.12 allows the same quote there), which are
// skipped whole, at most MaxDepth deep.
func (lx *lexer) scanPyString(i, nest int) (int, error) {
	if nest >= MaxDepth {
		return i, ErrTooDeep
	}
	src := lx.src
	fstring := false
	for src[i] != '\'' && src[i] != '"' {
		if src[i] == 'f' || src[i] == 'F' {
			fstring = true
		}
		i++
	}
	// a raw string, too, skips the character after a backslash: r'\'' is
	// one string
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
				lx.newline(i + 1)
			}
			i += 2
			continue
		case c == '\n':
			if !triple && depth == 0 {
				return i, ErrUnterminated
			}
			lx.newline(i)
		case fstring && c == '{':
			if depth == 0 && i+1 < len(src) && src[i+1] == '{' {
				i += 2
				continue
			}
			if depth >= MaxDepth {
				return i, ErrTooDeep
			}
			depth++
		case fstring && c == '}' && depth > 0:
			depth--
		case depth > 0 && (c == '\'' || c == '"' || isPyStringStart(src, i)):
			j, err := lx.scanPyString(i, nest+1)
			if err != nil {
				return j, err
			}
			i = j
			continue
		case c == q && depth == 0:
			if !triple {
				return i + 1, nil
			}
			if i+2 < len(src) && src[i+1] == q && src[i+2] == q {
				return i + 3, nil
			}
		}
		i++
	}
	return i, ErrUnterminated
}

func scanNumber(src []byte, i int) int {
	j := i + 1
	for j < len(src) && (isIdentPart(src[j]) || src[j] == '.' ||
		(src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E') && !isHexPrefixed(src[i:j])) {
		j++
	}
	return j
}

func isHexPrefixed(num []byte) bool {
	return len(num) > 1 && num[0] == '0' && (num[1] == 'x' || num[1] == 'X')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }

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
