package propose

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// maxJSONDepth bounds the nesting of any JSON a proposer returns. A proposal
// is four levels deep; constraints need a few more.
const maxJSONDepth = 32

// checkJSON reports whether data is exactly one JSON value, nested at most
// maxJSONDepth deep, with no key repeated within an object
// ([strictjson.Check]). encoding/json keeps the last of two equal keys
// silently, so without this check a hostile document could show a reader one
// value and the decoder another. Errors name the JSON path.
func checkJSON(data []byte) error {
	err := strictjson.Check(data, maxJSONDepth)
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Kind {
	case strictjson.ErrSyntax:
		switch {
		case len(bytes.TrimSpace(data)) == 0:
			return errors.New("not JSON: empty")
		case se.Err == nil:
			return fmt.Errorf("not JSON: %w", io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("not JSON: %w", se.Err)
	case strictjson.ErrTrailingData:
		return errors.New("not JSON: more than one value (trailing data after the first)")
	case strictjson.ErrDuplicateKey:
		return fmt.Errorf("%s: key appears twice", shortPath(joinPath(se.Path, se.Key)))
	}
	return err
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
