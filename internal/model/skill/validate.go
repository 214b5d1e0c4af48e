package skill

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits from the specification, as skills-ref applies them.
const (
	MaxNameLength          = 64
	MaxDescriptionLength   = 1024
	MaxCompatibilityLength = 500
)

// Options controls parsing and validation.
type Options struct {
	// Mode is Lenient (the zero value) or Strict.
	Mode Mode
	// Category is the category derived from where the skill was found; a
	// "category" in the frontmatter takes precedence.
	Category string
	// SkipBody leaves Skill.Body empty, for callers that only index the
	// frontmatter (a scan): it saves a copy of every file.
	SkipBody bool
}

// vendorKeys are frontmatter keys defined by major clients (Claude Code,
// Codex) and by skillgate's own extensions. Lenient mode keeps them without
// a warning; any other unknown key is kept with a warning.
var vendorKeys = map[string]bool{
	// Claude Code.
	"disable-model-invocation": true, "user-invocable": true, "argument-hint": true,
	"arguments": true, "when_to_use": true, "model": true, "effort": true,
	"context": true, "agent": true, "hooks": true, "paths": true, "shell": true,
	// skillgate extensions (seed 002 and 003).
	keyTier: true, keyInvokableBy: true, keyInvokableByAlt: true, keyCategory: true, keyVersion: true,
}

// Parse parses and validates the content of a SKILL.md whose directory is
// named dirName. It never fails: every problem becomes a diagnostic, so a
// rejected skill can still be shown with its reasons.
func Parse(content []byte, dirName string, opts Options) *Skill {
	s := &Skill{}
	mode := opts.Mode
	// Directory names come from the file system and may not be UTF-8.
	dirName = strings.ToValidUTF8(dirName, "\uFFFD")
	doc, err := splitDocument(content, !opts.SkipBody)
	if err != nil {
		s.errorf("", err.Error())
		return s
	}
	if doc.bomFound && mode == Lenient {
		s.warnf("", "SKILL.md starts with a byte-order mark; it was ignored, but save the file as UTF-8 without BOM")
	}
	s.Body = doc.body
	fm, err := parseYAML(doc.yaml, doc.yamlLine, mode == Strict)
	if err != nil && mode == Lenient && errors.Is(err, ErrInvalidYAML) {
		if fixed, lines := quoteColonValues(doc.yaml); len(lines) > 0 {
			if fm2, err2 := parseYAML(fixed, doc.yamlLine, false); err2 == nil {
				fm, err = fm2, nil
				for _, l := range lines {
					s.warnf("", fmt.Sprintf("line %d: a value containing ': ' was not quoted; it was read as text, but quote it in the file", l+doc.yamlLine))
				}
			}
		}
	}
	if err != nil {
		s.errorf("", err.Error())
		return s
	}
	s.Frontmatter = fm
	if md, ok := fm.Get(FieldMetadata); ok {
		if m, ok := md.(*Map); ok {
			s.Metadata = make(map[string]string, len(m.Keys))
			for _, k := range m.Keys {
				s.Metadata[k] = pyStr(m.Values[k])
			}
		}
	}
	if mode == Strict {
		validateStrict(s, fm, dirName)
	} else {
		validateLenient(s, fm, dirName)
	}
	fillOptional(s, fm, mode)
	parseExtensions(s, fm, mode, opts.Category)
	return s
}

// validateStrict is skills-ref's validate_metadata, check for check.
func validateStrict(s *Skill, fm *Map, dirName string) {
	var extra []string
	for _, k := range sortedKeys(fm.Keys) {
		if !isSpecField(k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		s.errorf("", fmt.Sprintf("Unexpected fields in frontmatter: %s. Only %s are allowed.", strings.Join(extra, ", "), pyList(specFields)))
	}
	if v, ok := fm.Get(FieldName); !ok {
		s.errorf(FieldName, "Missing required field in frontmatter: name")
	} else {
		str, isStr := v.(string)
		if !isStr || pyStrip(str) == "" {
			s.errorf(FieldName, "Field 'name' must be a non-empty string")
		} else {
			s.Name = norm.NFKC.String(pyStrip(str))
			for _, p := range nameProblems(s.Name, dirName) {
				s.errorf(FieldName, p.msg)
			}
		}
	}
	if v, ok := fm.Get(FieldDescription); !ok {
		s.errorf(FieldDescription, "Missing required field in frontmatter: description")
	} else {
		str, isStr := v.(string)
		if !isStr || pyStrip(str) == "" {
			s.errorf(FieldDescription, "Field 'description' must be a non-empty string")
		} else {
			s.Description = pyStrip(str)
			if n := utf8.RuneCountInString(str); n > MaxDescriptionLength {
				s.errorf(FieldDescription, fmt.Sprintf("Description exceeds %d character limit (%d chars)", MaxDescriptionLength, n))
			}
		}
	}
	if v, ok := fm.Get(FieldCompatibility); ok {
		str, isStr := v.(string)
		if !isStr {
			s.errorf(FieldCompatibility, "Field 'compatibility' must be a string")
		} else if n := utf8.RuneCountInString(str); n > MaxCompatibilityLength {
			s.errorf(FieldCompatibility, fmt.Sprintf("Compatibility exceeds %d character limit (%d chars)", MaxCompatibilityLength, n))
		}
	}
}

// validateLenient applies the client guide's rules: warn and load on a name
// that is too long or does not match its directory, reject on a missing
// description or name, keep unknown keys.
func validateLenient(s *Skill, fm *Map, dirName string) {
	for _, k := range fm.Keys {
		if !isSpecField(k) && !vendorKeys[k] {
			s.warnf(k, fmt.Sprintf("unknown frontmatter field '%s' was kept; move it under metadata: to follow the specification", k))
		}
	}
	if v, ok := fm.Get(FieldName); !ok {
		s.errorf(FieldName, "Missing required field in frontmatter: name")
	} else if str, isStr := v.(string); !isStr || pyStrip(str) == "" {
		s.errorf(FieldName, "Field 'name' must be a non-empty string")
	} else {
		s.Name = norm.NFKC.String(pyStrip(str))
		for _, p := range nameProblems(s.Name, dirName) {
			if p.unsafe {
				s.errorf(FieldName, p.msg)
			} else {
				s.warnf(FieldName, p.msg)
			}
		}
		if unsafeName(s.Name) {
			s.errorf(FieldName, fmt.Sprintf("Skill name '%s' cannot be used as an identifier: it contains '/', '\\', whitespace or control characters, or is '.' or '..'; rename it with letters, digits and hyphens", s.Name))
		}
	}
	if v, ok := fm.Get(FieldDescription); !ok {
		s.errorf(FieldDescription, "Missing required field in frontmatter: description")
	} else if str, isStr := v.(string); !isStr || pyStrip(str) == "" {
		s.errorf(FieldDescription, "Field 'description' must be a non-empty string")
	} else {
		s.Description = pyStrip(str)
		if n := utf8.RuneCountInString(str); n > MaxDescriptionLength {
			s.warnf(FieldDescription, fmt.Sprintf("Description exceeds %d character limit (%d chars); catalogs may shorten it", MaxDescriptionLength, n))
		}
	}
	if v, ok := fm.Get(FieldCompatibility); ok {
		if str, isStr := v.(string); !isStr {
			s.warnf(FieldCompatibility, "Field 'compatibility' must be a string; it was ignored")
		} else if n := utf8.RuneCountInString(str); n > MaxCompatibilityLength {
			s.warnf(FieldCompatibility, fmt.Sprintf("Compatibility exceeds %d character limit (%d chars)", MaxCompatibilityLength, n))
		}
	}
	if v, ok := fm.Get(FieldMetadata); ok {
		if _, isMap := v.(*Map); !isMap && v != "" {
			s.warnf(FieldMetadata, "Field 'metadata' must be a mapping of strings; it was ignored")
		}
	}
}

// fillOptional copies license, compatibility and allowed-tools.
func fillOptional(s *Skill, fm *Map, mode Mode) {
	if v, ok := fm.Get(FieldLicense); ok {
		s.License = pyStr(v)
	}
	if v, ok := fm.Get(FieldCompatibility); ok {
		if str, isStr := v.(string); isStr {
			s.Compatibility = str
		}
	}
	if v, ok := fm.Get(FieldAllowedTools); ok {
		switch t := v.(type) {
		case string:
			s.AllowedTools = strings.Fields(t)
		case []any:
			for _, e := range t {
				if str, ok := e.(string); ok && str != "" {
					s.AllowedTools = append(s.AllowedTools, str)
				} else if mode == Lenient {
					s.warnf(FieldAllowedTools, "Field 'allowed-tools' list items must be strings; a non-string item was ignored")
				}
			}
		default:
			if mode == Lenient {
				s.warnf(FieldAllowedTools, "Field 'allowed-tools' must be a space-separated string or a list of strings; it was ignored")
			}
		}
	}
}

type nameProblem struct {
	msg    string
	unsafe bool
}

// nameProblems returns skills-ref's name checks after the non-empty check,
// in its order, for a name already stripped and NFKC-normalised.
func nameProblems(name, dirName string) []nameProblem {
	var out []nameProblem
	if n := utf8.RuneCountInString(name); n > MaxNameLength {
		out = append(out, nameProblem{msg: fmt.Sprintf("Skill name '%s' exceeds %d character limit (%d chars)", name, MaxNameLength, n)})
	}
	if name != strings.ToLower(name) {
		out = append(out, nameProblem{msg: fmt.Sprintf("Skill name '%s' must be lowercase", name)})
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		out = append(out, nameProblem{msg: "Skill name cannot start or end with a hyphen"})
	}
	if strings.Contains(name, "--") {
		out = append(out, nameProblem{msg: "Skill name cannot contain consecutive hyphens"})
	}
	for _, r := range name {
		if !(pyIsAlnum(r) || r == '-') {
			out = append(out, nameProblem{msg: fmt.Sprintf("Skill name '%s' contains invalid characters. Only letters, digits, and hyphens are allowed.", name)})
			break
		}
	}
	if dirName != "" && norm.NFKC.String(dirName) != name {
		out = append(out, nameProblem{msg: fmt.Sprintf("Directory name '%s' must match skill name '%s'", dirName, name)})
	}
	return out
}

// unsafeName reports whether a name cannot serve as a path segment and an
// identifier even leniently.
func unsafeName(name string) bool {
	if name == "." || name == ".." {
		return true
	}
	for _, r := range name {
		if r == '/' || r == '\\' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return true
		}
	}
	return false
}

func isSpecField(k string) bool {
	for _, f := range specFields {
		if f == k {
			return true
		}
	}
	return false
}

// pyIsAlnum approximates Python's str.isalnum for one character: letters
// (categories L*) and numbers (N*).
func pyIsAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// pyIsSpace is Python's str.isspace for one character.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyList formats strings as Python prints a list of str: ['a', 'b'].
func pyList(items []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('\'')
		b.WriteString(s)
		b.WriteByte('\'')
	}
	b.WriteByte(']')
	return b.String()
}

// pyStr renders a frontmatter value as text, as str() would for the simple
// shapes frontmatter holds.
func pyStr(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return ""
	default:
		b, _ := jsonMarshal(t)
		return string(b)
	}
}
