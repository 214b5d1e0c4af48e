package codescan

import "fmt"

// TokenizeJS splits JavaScript or TypeScript source into names, numbers,
// strings, template literals (with their ${…} substitutions tokenized as
// code), regular expression literals, comments, operators and line ends
// outside brackets. A slash starts a regular expression where an operand is
// expected (after an operator, an opening bracket, a comma or a keyword such
// as return), else it divides. A #! first line is skipped.
func TokenizeJS(src []byte) ([]Token, error) {
	lx := &lexer{src: src, toks: make([]Token, 0, len(src)/4), line: 1}
	var stack []byte // brackets, and '`' for a template's ${ substitution
	lastCode := -1   // the index in lx.toks of the last token that is not a comment or line end
	i := 0
	if len(src) > 1 && src[0] == '#' && src[1] == '!' {
		for i < len(src) && src[i] != '\n' {
			i++
		}
	}
	emit := func(k TokKind, start, end, line, lineStart int) {
		lx.emit(k, start, end, line, lineStart)
		if k != Comment && k != Newline {
			lastCode = len(lx.toks) - 1
		}
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			if len(stack) == 0 && len(lx.toks) > 0 && lx.toks[len(lx.toks)-1].Kind != Newline {
				lx.emit(Newline, i, i+1, lx.line, lx.lineStart)
			}
			lx.newline(i)
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			j := i
			for j < len(src) && src[j] != '\n' {
				j++
			}
			emit(Comment, i, j, lx.line, lx.lineStart)
			i = j
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			line, ls := lx.line, lx.lineStart
			j := i + 2
			for j+1 < len(src) && (src[j] != '*' || src[j+1] != '/') {
				if src[j] == '\n' {
					lx.newline(j)
				}
				j++
			}
			if j+1 >= len(src) {
				return lx.fail(ErrUnterminated)
			}
			emit(Comment, i, j+2, line, ls)
			i = j + 2
		case c == '\'' || c == '"':
			line, ls := lx.line, lx.lineStart
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					if j+1 < len(src) && src[j+1] == '\n' {
						lx.newline(j + 1)
					}
					j++
				}
				j++
			}
			if j >= len(src) || src[j] != c {
				return lx.fail(ErrUnterminated)
			}
			emit(String, i, j+1, line, ls)
			i = j + 1
		case c == '`' || c == '}' && len(stack) > 0 && stack[len(stack)-1] == '`':
			if c == '}' {
				stack = stack[:len(stack)-1]
			}
			line, ls := lx.line, lx.lineStart
			j, sub, err := lx.scanTemplate(i + 1)
			if err != nil {
				return lx.fail(err)
			}
			emit(Template, i, j, line, ls)
			if sub {
				if len(stack) >= MaxDepth {
					return lx.fail(ErrTooDeep)
				}
				stack = append(stack, '`')
			}
			i = j
		case c == '/' && regexpAllowed(lx.toks, lastCode):
			j, err := scanRegexp(src, i+1)
			if err != nil {
				return lx.fail(err)
			}
			emit(Regexp, i, j, lx.line, lx.lineStart)
			i = j
		case isIdentStart(c) || c == '#':
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			emit(Name, i, j, lx.line, lx.lineStart)
			i = j
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			j := scanNumber(src, i)
			emit(Number, i, j, lx.line, lx.lineStart)
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
			emit(Op, i, i+1, lx.line, lx.lineStart)
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

// scanTemplate scans a template literal's text from src[i] to its closing
// backquote, or to a ${ that opens a substitution (sub is then true).
func (lx *lexer) scanTemplate(i int) (end int, sub bool, err error) {
	src := lx.src
	for i < len(src) {
		switch src[i] {
		case '\\':
			if i+1 < len(src) && src[i+1] == '\n' {
				lx.newline(i + 1)
			}
			i += 2
			continue
		case '\n':
			lx.newline(i)
		case '`':
			return i + 1, false, nil
		case '$':
			if i+1 < len(src) && src[i+1] == '{' {
				return i + 2, true, nil
			}
		}
		i++
	}
	return i, false, ErrUnterminated
}

// scanRegexp scans a regular expression literal's body and flags from
// src[i].
func scanRegexp(src []byte, i int) (int, error) {
	class := false
	for i < len(src) && src[i] != '\n' {
		switch c := src[i]; {
		case c == '\\':
			i++
		case c == '[':
			class = true
		case c == ']':
			class = false
		case c == '/' && !class:
			i++
			for i < len(src) && isIdentPart(src[i]) {
				i++
			}
			return i, nil
		}
		i++
	}
	return i, ErrUnterminated
}

// regexpAllowed reports whether a slash after toks starts a regular
// expression: at the start, after an operator other than a closing bracket,
// or after a keyword that takes an operand. last is the index of the last
// token that is not a comment or a line end (-1 for none), kept by the
// tokenizer so that a run of comments is not walked back over at each slash.
func regexpAllowed(toks []Token, last int) bool {
	if last < 0 {
		return true
	}
	t := toks[last]
	switch t.Kind {
	case Op:
		return t.Text != ")" && t.Text != "]" && t.Text != "}"
	case Name:
		switch t.Text {
		case "return", "typeof", "instanceof", "in", "of", "new", "delete", "void",
			"throw", "case", "do", "else", "yield", "await":
			return true
		}
	default: // after a number, string, template or regexp, a slash divides
	}
	return false
}
