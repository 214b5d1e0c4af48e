package capability

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// CompileSchema compiles a JSON Schema from outside (a tool's schema from
// an upstream server, an executor's from a catalog file) under url, the
// name its errors give it: draft 2020-12 unless the schema names another,
// and never a referenced URL loaded (the library would read file:// ones,
// so a hostile $ref could read local files).
func CompileSchema(url string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusingLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// refusingLoader refuses to load any schema by URL; the standard
// metaschemas are embedded in the library and still resolve.
type refusingLoader struct{}

// Load implements jsonschema.URLLoader by refusing.
func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %s is not allowed; a tool schema must be self-contained", strictjson.Quote(url, 200))
}
