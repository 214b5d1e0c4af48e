package propose

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// maxJSONDepth bounds the nesting of any JSON a proposer returns. A proposal
// is four levels deep; constraints need a few more.
const maxJSONDepth = 32

// jsonFrame is one open object or array while checkJSON walks a document.
type jsonFrame struct {
	obj     bool
	wantKey bool
	keys    map[string]bool
	path    string // path of this object or array
	key     string // the current key, in an object
	index   int    // the next index, in an array
}

// checkJSON reports whether data is exactly one JSON value, nested at most
// maxJSONDepth deep, with no key repeated within an object. encoding/json
// keeps the last of two equal keys silently, so without this check a hostile
// document could show a reader one value and the decoder another. Errors
// name the JSON path.
func checkJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []jsonFrame
	values := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("not JSON: %w", err)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		path := ""
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			switch {
			case top.obj && top.wantKey:
				key, _ := tok.(string)
				if top.keys[key] {
					return fmt.Errorf("%s: key appears twice", shortPath(joinPath(top.path, key)))
				}
				top.keys[key] = true
				top.key = key
				top.wantKey = false
				continue
			case top.obj:
				path = joinPath(top.path, top.key)
				top.wantKey = true
			default:
				path = top.path + "[" + strconv.Itoa(top.index) + "]"
				top.index++
			}
		} else {
			values++
			if values > 1 {
				return errors.New("not JSON: more than one value (trailing data after the first)")
			}
		}
		if d, ok := tok.(json.Delim); ok {
			if len(stack) >= maxJSONDepth {
				return fmt.Errorf("%s: nested more than %d levels deep", shortPath(orTop(path)), maxJSONDepth)
			}
			stack = append(stack, jsonFrame{obj: d == '{', wantKey: d == '{', keys: map[string]bool{}, path: path})
		}
	}
	if values == 0 {
		return errors.New("not JSON: empty")
	}
	return nil
}

// joinPath appends an object key to a JSON path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// shortPath bounds a JSON path (whose keys come from hostile input) for an
// error message.
func shortPath(path string) string { return cleanText(path, 200) }

// orTop names the top-level value when path is empty.
func orTop(path string) string {
	if path == "" {
		return "the document"
	}
	return path
}

// isNull reports whether data is absent or the JSON null.
func isNull(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) == 0 || string(t) == "null"
}

// marshalJSON encodes v without HTML escaping and without a trailing newline.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// compactJSON returns data without insignificant white space. data must be
// valid JSON.
func compactJSON(data []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return data
	}
	return buf.Bytes()
}
