package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// member is one key of a JSON object with its raw value, in document order.
type member struct {
	key   string
	value json.RawMessage
}

// errNotObject is returned by objectMembers when the value is valid JSON but
// not an object; callers turn it into a message that names the field.
var errNotObject = errors.New("not a JSON object")

// objectMembers decodes data, which must be exactly one JSON object, into its
// members in document order. Unlike encoding/json it is case-sensitive by
// construction and rejects duplicate keys, so a hostile document cannot show
// one value to one reader and another value to another.
func objectMembers(data []byte) ([]member, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonSyntaxError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var (
		members []member
		seen    = make(map[string]bool)
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonSyntaxError(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("object key is not a string")
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonSyntaxError(err)
		}
		members = append(members, member{key: key, value: raw})
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, jsonSyntaxError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON object")
	}
	return members, nil
}

// jsonSyntaxError turns a decoder error into a short message without the
// "json: " noise, keeping the byte offset that helps find the fault.
func jsonSyntaxError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("not valid JSON at byte %d: %s", se.Offset, se.Error())
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("not valid JSON: unexpected end of input")
	}
	return fmt.Errorf("not valid JSON: %w", err)
}

// jsonKind names the JSON type of a raw value for error messages.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "empty"
	}
	switch raw[0] {
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

// decodeString decodes raw as a JSON string.
func decodeString(raw json.RawMessage) (string, bool) {
	if jsonKind(raw) != "a string" {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// decodeBool decodes raw as a JSON boolean.
func decodeBool(raw json.RawMessage) (value, ok bool) {
	if jsonKind(raw) != "a boolean" {
		return false, false
	}
	if err := json.Unmarshal(raw, &value); err != nil {
		return false, false
	}
	return value, true
}

// quoteBounded quotes s for an error message, cutting it at max bytes so that
// hostile text (a server's error message, a tool name) cannot flood a log.
func quoteBounded(s string, max int) string {
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}
