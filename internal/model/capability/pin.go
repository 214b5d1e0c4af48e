package capability

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gowebpki/jcs"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
	"github.com/skillgate/skillgate/internal/platform/termtext"
)

// Pin pre-image domain tags. The version byte in the tag lets the format
// change later without old pins ever colliding with new ones.
const (
	toolPinDomain = "skillgate/mcp-tool-pin/v1\x00"
	setPinDomain  = "skillgate/mcp-pin-set/v1\x00"
	digestPrefix  = "sha256:"
)

// ServerIdentity is what a server reports about itself in initialize
// (serverInfo). It is part of every tool pin, so a server that changes its
// name or version invalidates its pins: a version bump can change code
// without changing a single description.
type ServerIdentity struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// String returns "name@version".
func (s ServerIdentity) String() string { return s.Name + "@" + s.Version }

// ToolPin pins one tool definition exactly as the server sent it.
type ToolPin struct {
	// Name is the tool name (the capabilityId).
	Name string `json:"name"`
	// Digest is "sha256:" + hex SHA-256 of the domain tag
	// "skillgate/mcp-tool-pin/v1\x00" followed by the RFC 8785 canonical JSON
	// of {"server": {"name", "version"}, "tool": <definition>}.
	Digest string `json:"digest"`
	// Definition is the RFC 8785 canonical JSON of the whole tool object as
	// received: name, title, description, inputSchema, outputSchema,
	// annotations, _meta, icons, execution and any field a later protocol
	// adds. It is kept so that a diff can show what changed.
	Definition json.RawMessage `json:"definition"`
}

// PinSet is the pinned state of one server: its identity and its tools,
// sorted by name.
type PinSet struct {
	Server ServerIdentity `json:"server"`
	Tools  []ToolPin      `json:"tools"`
}

// NewToolPin pins one raw tool definition (an element of a tools/list result)
// for the given server. It fails if the definition is not an object with a
// string name, or is not canonicalizable JSON (for example a duplicate key,
// invalid UTF-8, or a number outside IEEE 754 double range).
func NewToolPin(server ServerIdentity, rawTool json.RawMessage) (ToolPin, error) {
	canon, err := jcs.Transform(rawTool)
	if err != nil {
		return ToolPin{}, fmt.Errorf("%w: not canonical JSON: %w", ErrInvalidTool, err)
	}
	members, err := strictjson.Object(canon)
	if errors.Is(err, strictjson.ErrNotObject) {
		return ToolPin{}, fmt.Errorf("%w: a tool must be a JSON object", ErrInvalidTool)
	}
	if err != nil {
		return ToolPin{}, fmt.Errorf("%w: %w", ErrInvalidTool, err)
	}
	var name string
	for _, m := range members {
		if m.Key == "name" {
			name, _ = strictjson.String(m.Value)
		}
	}
	if name == "" {
		return ToolPin{}, fmt.Errorf("%w: name is missing, empty or not a string", ErrInvalidTool)
	}
	digest, err := toolDigest(server, canon)
	if err != nil {
		return ToolPin{}, err
	}
	return ToolPin{Name: name, Digest: digest, Definition: canon}, nil
}

// toolDigest computes a ToolPin digest over a canonical definition.
func toolDigest(server ServerIdentity, canonTool []byte) (string, error) {
	srv, err := json.Marshal(server)
	if err != nil {
		return "", err
	}
	pre := make([]byte, 0, len(canonTool)+len(srv)+32)
	pre = append(pre, `{"server":`...)
	pre = append(pre, srv...)
	pre = append(pre, `,"tool":`...)
	pre = append(pre, canonTool...)
	pre = append(pre, '}')
	canon, err := jcs.Transform(pre)
	if err != nil {
		return "", fmt.Errorf("%w: not canonical JSON: %w", ErrInvalidPin, err)
	}
	sum := sha256.Sum256(append([]byte(toolPinDomain), canon...))
	return digestPrefix + hex.EncodeToString(sum[:]), nil
}

// Lookup returns the pin of the named tool.
func (p PinSet) Lookup(name string) (ToolPin, bool) {
	i, ok := slices.BinarySearchFunc(p.Tools, name, func(t ToolPin, n string) int { return strings.Compare(t.Name, n) })
	if !ok {
		return ToolPin{}, false
	}
	return p.Tools[i], true
}

// Names returns the pinned tool names, sorted.
func (p PinSet) Names() []string {
	out := make([]string, len(p.Tools))
	for i, t := range p.Tools {
		out[i] = t.Name
	}
	return out
}

// Select returns the pins of the named tools only (the ones a human
// approved). Names that are not pinned are ignored.
func (p PinSet) Select(names ...string) PinSet {
	out := PinSet{Server: p.Server}
	for _, t := range p.Tools {
		if slices.Contains(names, t.Name) {
			out.Tools = append(out.Tools, t)
		}
	}
	return out
}

// Digest returns one digest for the whole set: the server identity and every
// tool's name and digest, in name order. It identifies an approval.
func (p PinSet) Digest() string {
	type entry struct {
		Name   string `json:"name"`
		Digest string `json:"digest"`
	}
	entries := make([]entry, len(p.Tools))
	for i, t := range p.Tools {
		entries[i] = entry{t.Name, t.Digest}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	data, _ := json.Marshal(struct {
		Server ServerIdentity `json:"server"`
		Tools  []entry        `json:"tools"`
	}{p.Server, entries})
	canon, err := jcs.Transform(data)
	if err != nil { // cannot happen: data is our own marshalled struct
		canon = data
	}
	sum := sha256.Sum256(append([]byte(setPinDomain), canon...))
	return digestPrefix + hex.EncodeToString(sum[:])
}

// Verify checks a stored pin set: tools sorted and unique by name, each
// definition canonical, named as its pin, and matching its digest. A pin set
// read back from storage must pass Verify before it is trusted; a failure
// wraps [ErrInvalidPin].
func (p PinSet) Verify() error {
	for i, t := range p.Tools {
		if i > 0 && p.Tools[i-1].Name >= t.Name {
			return fmt.Errorf("%w: tools are not sorted and unique by name at %q", ErrInvalidPin, t.Name)
		}
		if err := t.verify(p.Server); err != nil {
			return err
		}
	}
	return nil
}

func (t ToolPin) verify(server ServerIdentity) error {
	canon, err := jcs.Transform(t.Definition)
	if err != nil || !bytes.Equal(canon, t.Definition) {
		return fmt.Errorf("%w: tool %q: the recorded definition is not canonical JSON", ErrInvalidPin, t.Name)
	}
	got, err := NewToolPin(server, t.Definition)
	if err != nil {
		return fmt.Errorf("%w: tool %q: %w", ErrInvalidPin, t.Name, err)
	}
	if got.Name != t.Name {
		return fmt.Errorf("%w: tool %q: the recorded definition is named %q", ErrInvalidPin, t.Name, got.Name)
	}
	if got.Digest != t.Digest {
		return fmt.Errorf("%w: tool %q: the digest does not match the recorded definition", ErrInvalidPin, t.Name)
	}
	return nil
}

// Drift is the difference between a pinned set and a live one. An empty
// Drift means every pinned tool is offered unchanged and nothing was added.
type Drift struct {
	// Server is set when the server's reported name or version changed.
	Server *FieldChange `json:"server,omitempty"`
	// Added lists tools offered live but not pinned, sorted.
	Added []string `json:"added,omitempty"`
	// Removed lists pinned tools no longer offered, sorted.
	Removed []string `json:"removed,omitempty"`
	// Changed lists pinned tools whose live definition differs, by name.
	Changed []ToolChange `json:"changed,omitempty"`
	// Renamed pairs a removed tool with an added one whose definition is
	// identical apart from its name: a rename that content pinning keyed by
	// name would otherwise miss. Both names also appear in Removed and Added.
	Renamed []Rename `json:"renamed,omitempty"`
}

// ToolChange is one changed tool and the fields that changed.
type ToolChange struct {
	Name   string        `json:"name"`
	Fields []FieldChange `json:"fields"`
}

// FieldChange is one changed field with a readable before and after: string
// fields (description, title) as their text, other fields as canonical JSON,
// and "(absent)" for a field that did not exist on that side.
type FieldChange struct {
	Field  string `json:"field"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Rename is a probable rename: From was removed and To added with the same
// definition otherwise.
type Rename struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// absentText renders a missing field in a FieldChange.
const absentText = "(absent)"

// Empty reports whether there is no drift at all.
func (d Drift) Empty() bool {
	return d.Server == nil && len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Changed) == 0
}

// Affected returns, sorted, every tool name the drift touches: added,
// removed and changed. These are the capabilities to block until a human
// re-approves them.
func (d Drift) Affected() []string {
	out := slices.Concat(d.Added, d.Removed)
	for _, c := range d.Changed {
		out = append(out, c.Name)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// Omit returns d without the tools named in leftOut among its added tools
// and renames: tools the server offered when the pins were approved and a
// human deliberately left out of the approval. They are not new, so their
// presence is not drift; they stay uncallable because they are not pinned.
func (d Drift) Omit(leftOut []string) Drift {
	if len(leftOut) == 0 {
		return d
	}
	var added []string
	for _, a := range d.Added {
		if !slices.Contains(leftOut, a) {
			added = append(added, a)
		}
	}
	d.Added = added
	var renamed []Rename
	for _, r := range d.Renamed {
		if !slices.Contains(leftOut, r.To) {
			renamed = append(renamed, r)
		}
	}
	d.Renamed = renamed
	return d
}

// String renders the drift for a human reviewer, one line per fact: the
// server's identity and the fields' values come from the server, so each
// is rendered on its one line by termtext.Escape (a description's line
// feeds shown as \n, never starting a line of their own).
func (d Drift) String() string {
	if d.Empty() {
		return "no drift"
	}
	var b strings.Builder
	if d.Server != nil {
		fmt.Fprintf(&b, "server changed: %s -> %s\n", termtext.Escape(d.Server.Before), termtext.Escape(d.Server.After))
	}
	for _, n := range d.Added {
		fmt.Fprintf(&b, "added tool %q\n", n)
	}
	for _, n := range d.Removed {
		fmt.Fprintf(&b, "removed tool %q\n", n)
	}
	for _, r := range d.Renamed {
		fmt.Fprintf(&b, "probably renamed %q -> %q\n", r.From, r.To)
	}
	for _, c := range d.Changed {
		fmt.Fprintf(&b, "changed tool %q:\n", c.Name)
		for _, f := range c.Fields {
			fmt.Fprintf(&b, "  %s:\n    before: %s\n    after:  %s\n", f.Field, termtext.Escape(f.Before), termtext.Escape(f.After))
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Diff compares a pinned set with a live one (both as produced by this
// package). A pinned tool whose recorded definition does not match its
// digest is reported as changed, field "pin", so that a corrupted or
// tampered store fails closed.
func Diff(pinned, live PinSet) Drift {
	var d Drift
	if pinned.Server != live.Server {
		d.Server = &FieldChange{Field: "serverInfo", Before: pinned.Server.String(), After: live.Server.String()}
	}
	liveByName := make(map[string]ToolPin, len(live.Tools))
	for _, t := range live.Tools {
		liveByName[t.Name] = t
	}
	pinnedByName := make(map[string]ToolPin, len(pinned.Tools))
	for _, t := range pinned.Tools {
		pinnedByName[t.Name] = t
	}
	for _, p := range pinned.Tools {
		l, ok := liveByName[p.Name]
		if !ok {
			d.Removed = append(d.Removed, p.Name)
			continue
		}
		if err := p.verify(pinned.Server); err != nil {
			d.Changed = append(d.Changed, ToolChange{Name: p.Name, Fields: []FieldChange{{Field: "pin", Before: err.Error(), After: l.Digest}}})
			continue
		}
		if p.Digest == l.Digest {
			continue
		}
		fields := fieldChanges(p.Definition, l.Definition)
		if d.Server != nil {
			fields = append([]FieldChange{*d.Server}, fields...)
		}
		d.Changed = append(d.Changed, ToolChange{Name: p.Name, Fields: fields})
	}
	for _, l := range live.Tools {
		if _, ok := pinnedByName[l.Name]; !ok {
			d.Added = append(d.Added, l.Name)
		}
	}
	sort.Strings(d.Added)
	sort.Strings(d.Removed)
	sort.Slice(d.Changed, func(i, j int) bool { return d.Changed[i].Name < d.Changed[j].Name })
	d.Renamed = renames(d.Removed, d.Added, pinnedByName, liveByName)
	return d
}

// fieldChanges lists the top-level fields that differ between two canonical
// definitions, in key order.
func fieldChanges(before, after json.RawMessage) []FieldChange {
	bm, errB := strictjson.Object(before)
	am, errA := strictjson.Object(after)
	if errB != nil || errA != nil {
		return []FieldChange{{Field: "definition", Before: string(before), After: string(after)}}
	}
	bv := make(map[string]json.RawMessage, len(bm))
	for _, m := range bm {
		bv[m.Key] = m.Value
	}
	av := make(map[string]json.RawMessage, len(am))
	for _, m := range am {
		av[m.Key] = m.Value
	}
	keys := make([]string, 0, len(bv)+len(av))
	for k := range bv {
		keys = append(keys, k)
	}
	for k := range av {
		if _, ok := bv[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []FieldChange
	for _, k := range keys {
		b, inB := bv[k]
		a, inA := av[k]
		if inB && inA && bytes.Equal(b, a) {
			continue
		}
		out = append(out, FieldChange{Field: k, Before: readable(b, inB), After: readable(a, inA)})
	}
	return out
}

// readable renders one canonical JSON value for a reviewer.
func readable(v json.RawMessage, present bool) string {
	if !present {
		return absentText
	}
	if s, ok := strictjson.String(v); ok {
		return s
	}
	return string(v)
}

// renames pairs removed and added tools whose definitions are equal once the
// name is removed.
func renames(removed, added []string, pinned, live map[string]ToolPin) []Rename {
	if len(removed) == 0 || len(added) == 0 {
		return nil
	}
	withoutName := func(def json.RawMessage) string {
		// A removed tool's recorded definition was not verified: read it
		// only when it is canonical (a duplicate key is not).
		if canon, err := jcs.Transform(def); err != nil || !bytes.Equal(canon, def) {
			return ""
		}
		ms, err := strictjson.Object(def)
		if err != nil {
			return ""
		}
		var b strings.Builder
		for _, m := range ms {
			if m.Key != "name" {
				b.WriteString(m.Key)
				b.WriteByte(0)
				b.Write(m.Value)
				b.WriteByte(0)
			}
		}
		return b.String()
	}
	byBody := make(map[string]string)
	for _, n := range removed {
		if body := withoutName(pinned[n].Definition); body != "" {
			byBody[body] = n
		}
	}
	var out []Rename
	for _, n := range added {
		if from, ok := byBody[withoutName(live[n].Definition)]; ok {
			out = append(out, Rename{From: from, To: n})
			delete(byBody, withoutName(live[n].Definition))
		}
	}
	return out
}
