// Package jsonout writes JSON for people and scripts to read: the CLI's
// --json output and the REST API's document bodies. Every such output goes
// through [Write], so the same value gives the same bytes on every surface.
package jsonout

import (
	"encoding/json"
	"io"
)

// Write writes v to w indented by two spaces, with HTML characters left
// as they are (a reader is not a browser), and one trailing newline.
func Write(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
