// Package strictjson reads JSON from outside strictly: valid UTF-8, exactly
// one value, no key repeated within an object, keys matched case-sensitively,
// unknown fields refused where a Go type is given, and nesting bounded.
//
// encoding/json alone is lenient in ways a hostile document can use: it keeps
// the last of two equal keys (so one reader may see one value and another
// reader another), it matches keys to struct fields without regard to case,
// and it replaces invalid UTF-8. Every skillgate package that reads JSON from
// outside (mcp.json, tool lists, constraint sets, model output, install
// artefacts) reads it through this package, so the rules are the same
// everywhere. encoding/json stays the authority on syntax: this package runs
// it first and then checks what it lets through.
//
// Errors are [*Error] values wrapping one of the sentinel errors below; their
// messages name the JSON path of the value at fault.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultMaxDepth is the nesting bound callers use when they have no better
// one: deeper than any document skillgate writes or expects, far below
// encoding/json's own limit of 10,000.
const DefaultMaxDepth = 64

// Sentinel errors, wrapped by every [*Error]; callers branch on them with
// errors.Is.
var (
	// ErrInvalidUTF8 means the input is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("not valid UTF-8")
	// ErrSyntax means the input is not valid JSON.
	ErrSyntax = errors.New("not valid JSON")
	// ErrTrailingData means something other than white space follows the
	// value.
	ErrTrailingData = errors.New("trailing data")
	// ErrNotObject means the value is valid JSON but not an object.
	ErrNotObject = errors.New("not a JSON object")
	// ErrNotArray means the value is valid JSON but not an array.
	ErrNotArray = errors.New("not a JSON array")
	// ErrDuplicateKey means an object has the same key twice.
	ErrDuplicateKey = errors.New("duplicate key")
	// ErrUnknownField means an object has a key its Go type has no field
	// for, including a key that differs from a field's name only in case.
	ErrUnknownField = errors.New("unknown field")
	// ErrTooDeep means objects and arrays nest deeper than the bound.
	ErrTooDeep = errors.New("nested too deep")
)

// Error is a problem with a JSON document, with where it is.
type Error struct {
	// Kind is the sentinel error: [ErrSyntax], [ErrDuplicateKey], …
	Kind error
	// Path is the JSON path of the object or value at fault, like
	// "capabilities[2].risk"; empty for the document itself.
	Path string
	// Key is the key at fault, for [ErrDuplicateKey] and [ErrUnknownField].
	Key string
	// Limit is the bound exceeded, for [ErrTooDeep].
	Limit int
	// Err is encoding/json's error, for [ErrSyntax]; nil at an unexpected
	// end of input.
	Err error
	// object records, for [ErrTrailingData], whether the value is an object.
	object bool
}

// maxQuoted bounds how much of a key or path (hostile text) an error message
// shows.
const maxQuoted = 200

// Error words the problem, naming its path and key.
func (e *Error) Error() string {
	var msg string
	switch e.Kind {
	case ErrSyntax:
		var se *json.SyntaxError
		switch {
		case errors.As(e.Err, &se):
			msg = fmt.Sprintf("not valid JSON at byte %d: %s", se.Offset, se.Error())
		case e.Err == nil:
			msg = "not valid JSON: unexpected end of input"
		default:
			msg = "not valid JSON: " + e.Err.Error()
		}
	case ErrTrailingData:
		if e.object {
			msg = "trailing data after the JSON object"
		} else {
			msg = "trailing data after the JSON value"
		}
	case ErrDuplicateKey, ErrUnknownField:
		msg = e.Kind.Error() + " " + Quote(e.Key, maxQuoted)
	case ErrTooDeep:
		msg = fmt.Sprintf("nested more than %d levels deep", e.Limit)
	default:
		msg = e.Kind.Error()
	}
	if e.Path != "" {
		return bound(e.Path) + ": " + msg
	}
	return msg
}

// Unwrap returns the sentinel error and, for a syntax error, encoding/json's.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// Member is one key of a JSON object with its raw value, in document order.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Check reports whether data is exactly one JSON value in valid UTF-8,
// nested at most maxDepth deep, with no key repeated within any object.
func Check(data []byte, maxDepth int) error {
	start, _, err := value(data)
	if err != nil {
		return err
	}
	w := walker{data: data, maxDepth: maxDepth}
	_, err = w.any(start, 0, nil)
	return err
}

// Object reads data, which must be exactly one JSON object in valid UTF-8,
// into its members in document order, refusing a repeated key. The members'
// values are valid JSON, left for the caller to read (with Object again for
// a nested object); their own keys and depth are not checked here, so that a
// caller can report a fault inside one member without refusing the rest.
func Object(data []byte) ([]Member, error) {
	start, _, err := value(data)
	if err != nil {
		return nil, err
	}
	w := walker{data: data}
	var members []Member
	_, err = w.object(start, nil, func(key string, vstart int) (int, error) {
		vend := w.skip(vstart)
		members = append(members, Member{Key: key, Value: data[vstart:vend:vend]})
		return vend, nil
	})
	return members, err
}

// Array reads data, which must be exactly one JSON array in valid UTF-8,
// into its elements. Like [Object], it leaves the elements for the caller.
func Array(data []byte) ([]json.RawMessage, error) {
	start, _, err := value(data)
	if err != nil {
		return nil, err
	}
	w := walker{data: data}
	var elems []json.RawMessage
	_, err = w.array(start, nil, func(_ int, vstart int) (int, error) {
		vend := w.skip(vstart)
		elems = append(elems, data[vstart:vend:vend])
		return vend, nil
	})
	return elems, err
}

// String decodes raw, one JSON value, as a string; ok is false when it is
// not a JSON string.
func String(raw []byte) (s string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 && raw[len(raw)-1] == '"' && utf8.Valid(raw) && !hasControl(raw[1:len(raw)-1]) && bytes.IndexByte(raw[1:len(raw)-1], '"') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// Bool decodes raw, one JSON value, as a boolean; ok is false when it is not
// true or false.
func Bool(raw []byte) (value, ok bool) {
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// IsNull reports whether raw is absent (empty or white space) or the JSON
// null.
func IsNull(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// Kind names the JSON type of raw, one JSON value, for an error message:
// "an object", "an array", "a string", "a boolean", "null", "a number", or
// "nothing" when raw is empty.
func Kind(raw []byte) string {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// Quote renders hostile text for an error message in Go quoted form, cut at
// max bytes on a character boundary, with the full length after a cut.
func Quote(s string, max int) string {
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}

// bound cuts a path (whose keys come from hostile input) for a message.
func bound(path string) string {
	if len(path) <= maxQuoted {
		return path
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(path[cut]) {
		cut--
	}
	return path[:cut] + "…"
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// value checks that data is valid UTF-8 holding exactly one valid JSON value
// and returns where the value starts and ends. encoding/json decides the
// syntax, so its messages (and its offsets) are the ones callers see.
func value(data []byte) (start, end int, err error) {
	if !utf8.Valid(data) {
		return 0, 0, &Error{Kind: ErrInvalidUTF8}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = nil
		}
		return 0, 0, &Error{Kind: ErrSyntax, Err: err}
	}
	end = int(dec.InputOffset())
	if len(bytes.TrimLeft(data[end:], " \t\r\n")) > 0 {
		return 0, 0, &Error{Kind: ErrTrailingData, object: raw[0] == '{'}
	}
	start = skipSpace(data, 0)
	return start, end, nil
}

// path is one step of a JSON path, linked to its parent; it is only turned
// into text when an error names it.
type path struct {
	parent *path
	key    string
	index  int // used when key is unset
	isKey  bool
}

func (p *path) String() string {
	if p == nil {
		return ""
	}
	var steps []*path
	for q := p; q != nil; q = q.parent {
		steps = append(steps, q)
	}
	var b strings.Builder
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		if s.isKey {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		} else {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// walker walks a document encoding/json has accepted, so it can assume the
// syntax is valid and only check what encoding/json lets through.
type walker struct {
	data     []byte
	maxDepth int
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index after the string starting at data[i] == '"'.
func (w *walker) stringEnd(i int) int {
	for i++; i < len(w.data); i++ {
		switch w.data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(w.data)
}

// scalarEnd returns the index after the number or literal starting at i.
func (w *walker) scalarEnd(i int) int {
	for i < len(w.data) {
		switch w.data[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// skip returns the index after the value starting at i, without checking it.
func (w *walker) skip(i int) int {
	switch w.data[i] {
	case '"':
		return w.stringEnd(i)
	case '{', '[':
		depth := 0
		for i < len(w.data) {
			switch w.data[i] {
			case '"':
				i = w.stringEnd(i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		return w.scalarEnd(i)
	}
}

// key decodes the object key data[i:end], quotes included.
func (w *walker) key(i, end int) string {
	raw := w.data[i:end]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // encoding/json accepted it already
	return s
}

// keySet detects a repeated key: a list for small objects, a map for large.
type keySet struct {
	list []string
	set  map[string]struct{}
}

const keySetListMax = 16

// add records key and reports whether it was new.
func (k *keySet) add(key string) bool {
	if k.set != nil {
		if _, dup := k.set[key]; dup {
			return false
		}
		k.set[key] = struct{}{}
		return true
	}
	for _, s := range k.list {
		if s == key {
			return false
		}
	}
	if len(k.list) < keySetListMax {
		k.list = append(k.list, key)
		return true
	}
	k.set = make(map[string]struct{}, 2*keySetListMax)
	for _, s := range k.list {
		k.set[s] = struct{}{}
	}
	k.set[key] = struct{}{}
	k.list = nil
	return true
}

// object walks the object starting at i, calling member for each member
// with its key and the start of its value, refusing a repeated key; member
// returns the index after the value. object returns the index after the
// object.
func (w *walker) object(i int, at *path, member func(key string, start int) (int, error)) (int, error) {
	if w.data[i] != '{' {
		return 0, &Error{Kind: ErrNotObject, Path: at.String()}
	}
	var keys keySet
	i = skipSpace(w.data, i+1)
	if w.data[i] == '}' {
		return i + 1, nil
	}
	for {
		kend := w.stringEnd(i)
		key := w.key(i, kend)
		if !keys.add(key) {
			return 0, &Error{Kind: ErrDuplicateKey, Path: at.String(), Key: key}
		}
		i = skipSpace(w.data, kend)
		i = skipSpace(w.data, i+1) // the ':'
		vend, err := member(key, i)
		if err != nil {
			return 0, err
		}
		i = skipSpace(w.data, vend)
		if w.data[i] == '}' {
			return i + 1, nil
		}
		i = skipSpace(w.data, i+1) // the ','
	}
}

// array walks the array starting at i like object.
func (w *walker) array(i int, at *path, elem func(index, start int) (int, error)) (int, error) {
	if w.data[i] != '[' {
		return 0, &Error{Kind: ErrNotArray, Path: at.String()}
	}
	i = skipSpace(w.data, i+1)
	if w.data[i] == ']' {
		return i + 1, nil
	}
	for n := 0; ; n++ {
		vend, err := elem(n, i)
		if err != nil {
			return 0, err
		}
		i = skipSpace(w.data, vend)
		if w.data[i] == ']' {
			return i + 1, nil
		}
		i = skipSpace(w.data, i+1)
	}
}

// any checks the value at i, depth levels deep, for repeated keys and depth,
// and returns the index after it.
func (w *walker) any(i, depth int, at *path) (int, error) {
	switch w.data[i] {
	case '{':
		if depth >= w.maxDepth {
			return 0, &Error{Kind: ErrTooDeep, Path: orTop(at), Limit: w.maxDepth}
		}
		return w.object(i, at, func(key string, start int) (int, error) {
			return w.any(start, depth+1, &path{parent: at, key: key, isKey: true})
		})
	case '[':
		if depth >= w.maxDepth {
			return 0, &Error{Kind: ErrTooDeep, Path: orTop(at), Limit: w.maxDepth}
		}
		return w.array(i, at, func(n, start int) (int, error) {
			return w.any(start, depth+1, &path{parent: at, index: n})
		})
	default:
		return w.skip(i), nil
	}
}

// orTop names the document when at is the top.
func orTop(at *path) string {
	if at == nil {
		return "the document"
	}
	return at.String()
}
