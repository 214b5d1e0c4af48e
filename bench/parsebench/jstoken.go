package main

import "fmt"

// tokenizeJS splits JavaScript or TypeScript source into names, numbers,
// strings, template literals (with their ${…} substitutions tokenized as code),
// regular expression literals, comments and operators. A slash starts a
// regular expression where an operand is expected (after an operator, an
// opening bracket, a comma or a keyword such as return), else it divides. It is
// the hand-written candidate the benchmark measures against goja's parser.
func tokenizeJS(src []byte) ([]token, error) {
	toks := make([]token, 0, len(src)/4)
	line := 1
	var stack []byte // brackets, and '`' for a template's ${ substitution
	i := 0
	if len(src) > 1 && src[0] == '#' && src[1] == '!' {
		for i < len(src) && src[i] != '\n' {
			i++
		}
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			j := i
			for j < len(src) && src[j] != '\n' {
				j++
			}
			toks = append(toks, token{tokComment, line, string(src[i:j])})
			i = j
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := i + 2
			start := line
			for j+1 < len(src) && (src[j] != '*' || src[j+1] != '/') {
				if src[j] == '\n' {
					line++
				}
				j++
			}
			if j+1 >= len(src) {
				return toks, fmt.Errorf("line %d: %w", start, errUnterminated)
			}
			toks = append(toks, token{tokComment, start, string(src[i : j+2])})
			i = j + 2
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					if j+1 < len(src) && src[j+1] == '\n' {
						line++
					}
					j++
				}
				j++
			}
			if j >= len(src) || src[j] != c {
				return toks, fmt.Errorf("line %d: %w", line, errUnterminated)
			}
			toks = append(toks, token{tokString, line, string(src[i : j+1])})
			i = j + 1
		case c == '`' || c == '}' && len(stack) > 0 && stack[len(stack)-1] == '`':
			if c == '}' {
				stack = stack[:len(stack)-1]
			}
			j, lines, sub, err := scanTemplate(src, i+1)
			if err != nil {
				return toks, fmt.Errorf("line %d: %w", line, err)
			}
			toks = append(toks, token{tokTemplate, line, string(src[i:j])})
			line += lines
			if sub {
				stack = append(stack, '`')
			}
			i = j
		case c == '/' && regexpAllowed(toks):
			j, err := scanRegexp(src, i+1)
			if err != nil {
				return toks, fmt.Errorf("line %d: %w", line, err)
			}
			toks = append(toks, token{tokRegexp, line, string(src[i:j])})
			i = j
		case isIdentStart(c) || c == '#':
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

// scanTemplate scans a template literal's text from src[i] to its closing
// backquote, or to a ${ that opens a substitution (sub is then true).
func scanTemplate(src []byte, i int) (end, lines int, sub bool, err error) {
	for i < len(src) {
		switch src[i] {
		case '\\':
			if i+1 < len(src) && src[i+1] == '\n' {
				lines++
			}
			i += 2
			continue
		case '\n':
			lines++
		case '`':
			return i + 1, lines, false, nil
		case '$':
			if i+1 < len(src) && src[i+1] == '{' {
				return i + 2, lines, true, nil
			}
		}
		i++
	}
	return i, lines, false, errUnterminated
}

// scanRegexp scans a regular expression literal's body and flags from src[i].
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
	return i, errUnterminated
}

// regexpAllowed reports whether a slash after toks starts a regular expression:
// at the start, after an operator other than a closing bracket, or after a
// keyword that takes an operand.
func regexpAllowed(toks []token) bool {
	k := len(toks) - 1
	for k >= 0 && toks[k].kind == tokComment {
		k--
	}
	if k < 0 {
		return true
	}
	t := toks[k]
	switch t.kind {
	case tokOp:
		return t.text != ")" && t.text != "]" && t.text != "}"
	case tokName:
		switch t.text {
		case "return", "typeof", "instanceof", "in", "of", "new", "delete", "void",
			"throw", "case", "do", "else", "yield", "await":
			return true
		}
	default: // after a number, string, template or regexp, a slash divides
	}
	return false
}
