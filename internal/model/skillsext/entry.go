package skillsext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// ExtensionID is the extension's name in capabilities.
const ExtensionID = "io.modelcontextprotocol/skills"

// Limits every host must accept, and servers should not exceed.
const (
	// MaxResources bounds a skill's files, SKILL.md included.
	MaxResources = 512
	// MaxTotalBytes bounds the sum of a skill's file sizes (16 MiB).
	MaxTotalBytes = 16 << 20
)

// Dynamic is the resources value of a skill without stable digests.
const Dynamic = "dynamic"

// Errors a host meets checking bytes against an entry.
var (
	// ErrVerify means bytes are not what the entry lists (size, digest, or
	// a file the entry does not list).
	ErrVerify = errors.New("skill verification failed")
	// ErrOverLimit means a skill exceeds the extension's limits.
	ErrOverLimit = errors.New("skill over the extension's limits")
)

// Resource is one file of a skill entry: its URI, the SHA-256 of its bytes
// ("sha256:<64 lowercase hex>") and their length.
type Resource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Entry is a Skill entry, the same in skills/list and skills/get: the URI
// of its SKILL.md, its frontmatter as a JSON object, and either the
// complete list of its files (Dynamic false) or no list at all (Dynamic
// true, written "dynamic").
type Entry struct {
	URI         string
	Frontmatter json.RawMessage
	Resources   []Resource
	Dynamic     bool
}

type entryWire struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources"`
}

// MarshalJSON writes the entry's wire form.
func (e Entry) MarshalJSON() ([]byte, error) {
	w := entryWire{URI: e.URI, Frontmatter: e.Frontmatter}
	if e.Dynamic {
		w.Resources = json.RawMessage(`"dynamic"`)
	} else {
		rs := e.Resources
		if rs == nil {
			rs = []Resource{}
		}
		b, err := json.Marshal(rs)
		if err != nil {
			return nil, err
		}
		w.Resources = b
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads an entry as a host receives it, refusing what the
// extension makes invalid: no uri, a frontmatter that is not an object, or
// resources missing or neither an array nor "dynamic".
func (e *Entry) UnmarshalJSON(b []byte) error {
	var w entryWire
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("skill entry: %w", err)
	}
	if w.URI == "" {
		return errors.New("skill entry: uri is missing")
	}
	if fm := bytes.TrimSpace(w.Frontmatter); len(fm) == 0 || fm[0] != '{' {
		return fmt.Errorf("skill entry %s: frontmatter must be a JSON object", w.URI)
	}
	out := Entry{URI: w.URI, Frontmatter: w.Frontmatter}
	rs := bytes.TrimSpace(w.Resources)
	switch {
	case string(rs) == `"dynamic"`:
		out.Dynamic = true
	case len(rs) > 0 && rs[0] == '[':
		if err := json.Unmarshal(rs, &out.Resources); err != nil {
			return fmt.Errorf("skill entry %s: resources: %w", w.URI, err)
		}
		if out.Resources == nil {
			out.Resources = []Resource{}
		}
	default:
		return fmt.Errorf(`skill entry %s: resources must be an array of files or "dynamic"`, w.URI)
	}
	*e = out
	return nil
}

// digestPattern is the form of a resource digest.
var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// CheckLimits returns an error wrapping [ErrOverLimit] when resources
// exceed the extension's limits, naming the limit.
func CheckLimits(resources []Resource) error {
	if len(resources) > MaxResources {
		return fmt.Errorf("%w: it has %d files, over the limit of %d files per skill", ErrOverLimit, len(resources), MaxResources)
	}
	var total int64
	for _, r := range resources {
		total += r.Size
	}
	if total > MaxTotalBytes {
		return fmt.Errorf("%w: its files total %d bytes, over the limit of %d bytes (16 MiB) per skill", ErrOverLimit, total, MaxTotalBytes)
	}
	return nil
}

// Find returns the resource of e listed at uri.
func (e *Entry) Find(uri string) (Resource, bool) {
	for _, r := range e.Resources {
		if r.URI == uri {
			return r, true
		}
	}
	return Resource{}, false
}

// Verify checks content read from r.URI against r: the same length and
// the same SHA-256. The error wraps [ErrVerify] and names the file; the
// content must then not be used.
func Verify(r Resource, content []byte) error {
	if int64(len(content)) != r.Size {
		return fmt.Errorf("%w: %s is %d bytes, the entry lists %d", ErrVerify, r.URI, len(content), r.Size)
	}
	if !digestPattern.MatchString(r.Digest) {
		return fmt.Errorf("%w: %s: the entry's digest %q is not sha256:<64 lowercase hex>", ErrVerify, r.URI, r.Digest)
	}
	if d := skill.FileDigest(content); d != r.Digest {
		return fmt.Errorf("%w: %s has digest %s, the entry lists %s", ErrVerify, r.URI, d, r.Digest)
	}
	return nil
}

// VerifyRead checks a read of uri while acting on e: the file must be
// listed (an unlisted file is a verification failure) and its bytes must
// match.
func (e *Entry) VerifyRead(uri string, content []byte) error {
	if e.Dynamic {
		return fmt.Errorf("%w: %s lists no digests (resources: \"dynamic\")", ErrVerify, e.URI)
	}
	r, ok := e.Find(uri)
	if !ok {
		return fmt.Errorf("%w: %s is not listed in the entry of %s", ErrVerify, uri, e.URI)
	}
	return Verify(r, content)
}

// VerifyFrontmatter checks a fetched SKILL.md against the entry's
// frontmatter field by field, as a host must before loading the skill: the
// file's frontmatter, typed as [FrontmatterJSON] types it, must hold the
// same fields with the same values (JSON numbers compared by value). The
// error wraps [ErrVerify] and names the first field that differs (in
// sorted order).
func (e *Entry) VerifyFrontmatter(skillMD []byte) error {
	served, err := FrontmatterJSON(skillMD)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrVerify, e.URI, err)
	}
	var a, b map[string]any
	if err := decodeNumbers(e.Frontmatter, &a); err != nil {
		return fmt.Errorf("%w: %s: the entry's frontmatter: %v", ErrVerify, e.URI, err)
	}
	if err := decodeNumbers(served, &b); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrVerify, e.URI, err)
	}
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		va, inA := a[k]
		vb, inB := b[k]
		switch {
		case !inA:
			return fmt.Errorf("%w: %s: SKILL.md has frontmatter field %q, the entry does not", ErrVerify, e.URI, k)
		case !inB:
			return fmt.Errorf("%w: %s: the entry has frontmatter field %q, SKILL.md does not", ErrVerify, e.URI, k)
		case !jsonEqual(va, vb):
			return fmt.Errorf("%w: %s: frontmatter field %q differs between the entry and SKILL.md", ErrVerify, e.URI, k)
		}
	}
	return nil
}

// decodeNumbers decodes JSON keeping numbers as json.Number.
func decodeNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// jsonEqual compares decoded JSON values, numbers by value.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, ex := x.Float64()
		fy, ey := y.Float64()
		return ex == nil && ey == nil && fx == fy
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}
