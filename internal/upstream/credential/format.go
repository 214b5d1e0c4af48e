package credential

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// formatVersion is the version of the decrypted store document.
const formatVersion = 1

// document is the decrypted store: {"version":1,"credentials":[…]}.
type document struct {
	Version     int           `json:"version"`
	Credentials []storedEntry `json:"credentials"`
}

// storedEntry is one entry as kept in the decrypted document.
type storedEntry struct {
	Name   string `json:"name"`
	Tenant string `json:"tenant"`
	Agent  string `json:"agent,omitempty"`
	Value  string `json:"value"`
}

// entryKey identifies an entry: its name and scope.
type entryKey struct {
	name, tenant, agent string
}

// table is a parsed store: entry key → value.
type table map[entryKey]string

// decode parses and validates a decrypted store document strictly: one
// JSON object with exactly the known fields, version 1, every entry's
// name, scope and value valid, no entry twice, at most MaxEntries. Errors
// name the entry by index and field, never a value.
func decode(data []byte) (table, error) {
	var doc document
	if err := strictjson.Decode(data, &doc, 4); err != nil {
		return nil, fmt.Errorf("not a credential store document: %w", err)
	}
	if doc.Version != formatVersion {
		return nil, fmt.Errorf("version %d is not supported (this skillgate reads version %d)", doc.Version, formatVersion)
	}
	if len(doc.Credentials) > MaxEntries {
		return nil, fmt.Errorf("%d entries; the limit is %d", len(doc.Credentials), MaxEntries)
	}
	t := make(table, len(doc.Credentials))
	for i, e := range doc.Credentials {
		if err := CheckName(e.Name); err != nil {
			return nil, fmt.Errorf("credentials[%d].name: %w", i, err)
		}
		if err := (Scope{Tenant: e.Tenant, Agent: e.Agent}).Check(); err != nil {
			return nil, fmt.Errorf("credentials[%d] (%s): %w", i, e.Name, err)
		}
		if err := checkValue(e.Value); err != nil {
			return nil, fmt.Errorf("credentials[%d] (%s): %w", i, e.Name, err)
		}
		k := entryKey{e.Name, e.Tenant, e.Agent}
		if _, dup := t[k]; dup {
			return nil, fmt.Errorf("credentials[%d]: %s for %s appears twice", i, e.Name, Scope{e.Tenant, e.Agent})
		}
		t[k] = e.Value
	}
	return t, nil
}

// encode writes t as a store document, entries sorted by tenant, agent,
// name, so that the same table always encodes to the same bytes.
func (t table) encode() ([]byte, error) {
	doc := document{Version: formatVersion, Credentials: make([]storedEntry, 0, len(t))}
	for k, v := range t {
		doc.Credentials = append(doc.Credentials, storedEntry{Name: k.name, Tenant: k.tenant, Agent: k.agent, Value: v})
	}
	sort.Slice(doc.Credentials, func(i, j int) bool {
		a, b := doc.Credentials[i], doc.Credentials[j]
		if a.Tenant != b.Tenant {
			return a.Tenant < b.Tenant
		}
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		return a.Name < b.Name
	})
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// entries lists t's names and scopes, sorted by tenant, agent, name.
func (t table) entries() []Entry {
	out := make([]Entry, 0, len(t))
	for k := range t {
		out = append(out, Entry{Name: k.name, Scope: Scope{Tenant: k.tenant, Agent: k.agent}})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Tenant != b.Tenant {
			return a.Tenant < b.Tenant
		}
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		return a.Name < b.Name
	})
	return out
}
