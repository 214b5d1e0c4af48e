// Package lockfile reads, writes and compares skillgate.lock: every
// enabled skill with its trust, where it came from (a scanned root, or an
// install's source with the ref and commit or the archive digest), its
// content digest, who signed it and the digests of its approved tool pins.
// A lock made on one machine lets another check that it serves the same
// skills (`skillgate verify`) or reproduce the installs (`skillgate
// install --locked`), refusing anything whose digest differs.
package lockfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// Schema identifies the format (docs/schemas/lock.v1.json).
const Schema = "https://skillgate.dev/schemas/lock.v1.json"

// FileName is the lock's conventional name.
const FileName = "skillgate.lock"

// MaxBytes bounds a lock file read.
const MaxBytes = 16 << 20

// Origins of an entry.
const (
	// OriginRoot is a skill found by scanning a configured root.
	OriginRoot = "root"
	// OriginInstall is an imported skill installed from a source.
	OriginInstall = "install"
)

// ErrInvalid is the error of a lock file that cannot be used.
var ErrInvalid = errors.New("invalid lock file")

// Entry is one enabled skill.
type Entry struct {
	// Key is the skill's identity ("category/name" or "name").
	Key string `json:"key"`
	// Origin is OriginRoot or OriginInstall.
	Origin string `json:"origin"`
	// Trust is the skill's trust tier (core, first_party, imported).
	Trust string `json:"trust,omitempty"`
	// Source is the root directory (root) or the install's source.
	Source string `json:"source"`
	// Ref, Commit and Path: a git source's ref, the commit it resolved
	// to and the skill's directory in the repository.
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit,omitempty"`
	Path   string `json:"path,omitempty"`
	// ArchiveSHA256 is an archive source's SHA-256 (hex).
	ArchiveSHA256 string `json:"archiveSha256,omitempty"`
	// Digest is the skill's content digest.
	Digest string `json:"digest"`
	// Signer names who signed the skill with a trusted key, if anyone.
	Signer string `json:"signer,omitempty"`
	// Pins are the approved pin-set digests per MCP server id.
	Pins map[string]string `json:"pins,omitempty"`
	// PublishedSkills are the approved skills the servers publish through
	// the MCP Skills extension, by "serverId/uri": the digest of the
	// resource set the approval binds, or "dynamic" for one approved
	// without integrity.
	PublishedSkills map[string]string `json:"publishedSkills,omitempty"`
	// Packages are the packages the servers launch (npx PKG, uvx PKG),
	// fetched and pinned at install, by server id: an install from the
	// lock fetches exactly these versions.
	Packages map[string]Package `json:"packages,omitempty"`
}

// Package is one pinned package a server launches.
type Package struct {
	// Ecosystem is "npm" or "pypi".
	Ecosystem string `json:"ecosystem"`
	// Name and Version are the package and its exact version.
	Name    string `json:"name"`
	Version string `json:"version"`
	// Integrity is the registry's hash of its archive.
	Integrity string `json:"integrity"`
}

// String is "name@version (integrity)".
func (p Package) String() string {
	if p.Name == "" {
		return ""
	}
	return p.Name + "@" + p.Version + " (" + p.Integrity + ")"
}

// File is a lock.
type File struct {
	Schema string  `json:"schema"`
	Skills []Entry `json:"skills"`
}

// New returns the lock of entries, in a stable order.
func New(entries []Entry) *File {
	f := &File{Schema: Schema, Skills: slices.Clone(entries)}
	if f.Skills == nil {
		f.Skills = []Entry{}
	}
	slices.SortFunc(f.Skills, func(a, b Entry) int {
		if c := strings.Compare(a.Origin, b.Origin); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return f
}

// Marshal encodes f as indented JSON with a final newline.
func (f *File) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

var (
	digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	hexRE    = regexp.MustCompile(`^[0-9a-f]{64}$`)
	commitRE = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
)

// Parse reads a lock file: strict JSON (no unknown or repeated keys),
// this schema, and every entry well formed and listed once.
func Parse(data []byte) (*File, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrInvalid, MaxBytes)
	}
	var f File
	if err := strictjson.Decode(bytes.TrimSpace(data), &f, 8); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if f.Schema != Schema {
		return nil, fmt.Errorf("%w: schema %q, expected %q", ErrInvalid, f.Schema, Schema)
	}
	seen := map[string]bool{}
	for i, e := range f.Skills {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%w: skills[%d] (%s): %s", ErrInvalid, i, e.Key, fmt.Sprintf(format, args...))
		}
		switch {
		case e.Key == "" || len(e.Key) > 256 || strings.ContainsAny(e.Key, "\x00\n\r"):
			return nil, bad("key must be a skill's identity")
		case e.Origin != OriginRoot && e.Origin != OriginInstall:
			return nil, bad("origin %q: use %s or %s", e.Origin, OriginRoot, OriginInstall)
		case e.Source == "":
			return nil, bad("source is required")
		case !digestRE.MatchString(e.Digest):
			return nil, bad("digest %q is not sha256:<64 hex digits>", e.Digest)
		case e.Commit != "" && !commitRE.MatchString(e.Commit):
			return nil, bad("commit %q is not a full commit id", e.Commit)
		case e.ArchiveSHA256 != "" && !hexRE.MatchString(e.ArchiveSHA256):
			return nil, bad("archiveSha256 %q is not 64 hex digits", e.ArchiveSHA256)
		case seen[e.Origin+"\x00"+e.Key]:
			return nil, bad("listed twice")
		}
		for id, d := range e.Pins {
			if id == "" || !digestRE.MatchString(d) {
				return nil, bad("pins[%q] %q is not sha256:<64 hex digits>", id, d)
			}
		}
		for ref, d := range e.PublishedSkills {
			if ref == "" || len(ref) > 4096 || d != "dynamic" && !digestRE.MatchString(d) {
				return nil, bad("publishedSkills[%q] %q is not sha256:<64 hex digits> or \"dynamic\"", ref, d)
			}
		}
		for id, p := range e.Packages {
			if id == "" || len(id) > 64 {
				return nil, bad("packages[%q]: the key must be a server id", id)
			}
			if p.Ecosystem != "npm" && p.Ecosystem != "pypi" {
				return nil, bad("packages[%q].ecosystem %q: use npm or pypi", id, p.Ecosystem)
			}
			for _, f := range [][2]string{{"name", p.Name}, {"version", p.Version}, {"integrity", p.Integrity}} {
				if f[1] == "" || len(f[1]) > 256 || strings.ContainsFunc(f[1], func(r rune) bool { return r <= ' ' || r == 0x7f }) {
					return nil, bad("packages[%q].%s %q must be 1 to 256 printable characters without spaces", id, f[0], f[1])
				}
			}
		}
		seen[e.Origin+"\x00"+e.Key] = true
	}
	return New(f.Skills), nil
}

// Difference is one way the skills served now differ from a lock.
type Difference struct {
	Origin string `json:"origin"`
	Key    string `json:"key"`
	// Field is what differs: "missing" (locked, not enabled now),
	// "unlocked" (enabled now, not in the lock), or an entry field.
	Field  string `json:"field"`
	Locked string `json:"locked,omitempty"`
	Now    string `json:"now,omitempty"`
}

// String says the difference in one line.
func (d Difference) String() string {
	switch d.Field {
	case "missing":
		return fmt.Sprintf("%s %s: in the lock (%s) but not enabled now", d.Origin, d.Key, d.Locked)
	case "unlocked":
		return fmt.Sprintf("%s %s: enabled now (%s) but not in the lock", d.Origin, d.Key, d.Now)
	}
	return fmt.Sprintf("%s %s: %s is %s in the lock, %s now", d.Origin, d.Key, d.Field, orNone(d.Locked), orNone(d.Now))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Compare lists how now differs from locked, in lock order: what is
// missing, what is new, and for skills in both every field that differs.
func Compare(locked, now *File) []Difference {
	index := func(f *File) map[string]Entry {
		m := make(map[string]Entry, len(f.Skills))
		for _, e := range f.Skills {
			m[e.Origin+"\x00"+e.Key] = e
		}
		return m
	}
	nowBy := index(now)
	lockBy := index(locked)
	var out []Difference
	for _, l := range locked.Skills {
		n, ok := nowBy[l.Origin+"\x00"+l.Key]
		if !ok {
			out = append(out, Difference{Origin: l.Origin, Key: l.Key, Field: "missing", Locked: l.Digest})
			continue
		}
		for _, f := range []struct{ name, l, n string }{
			{"digest", l.Digest, n.Digest}, {"trust", l.Trust, n.Trust}, {"source", l.Source, n.Source},
			{"ref", l.Ref, n.Ref}, {"commit", l.Commit, n.Commit}, {"path", l.Path, n.Path},
			{"archiveSha256", l.ArchiveSHA256, n.ArchiveSHA256}, {"signer", l.Signer, n.Signer},
		} {
			if f.l != f.n {
				out = append(out, Difference{Origin: l.Origin, Key: l.Key, Field: f.name, Locked: f.l, Now: f.n})
			}
		}
		ids := map[string]bool{}
		for id := range l.Pins {
			ids[id] = true
		}
		for id := range n.Pins {
			ids[id] = true
		}
		for _, id := range sortedKeys(ids) {
			if l.Pins[id] != n.Pins[id] {
				out = append(out, Difference{Origin: l.Origin, Key: l.Key, Field: "pins[" + id + "]", Locked: l.Pins[id], Now: n.Pins[id]})
			}
		}
		servers := map[string]bool{}
		for id := range l.Packages {
			servers[id] = true
		}
		for id := range n.Packages {
			servers[id] = true
		}
		for _, id := range sortedKeys(servers) {
			if l.Packages[id] != n.Packages[id] {
				out = append(out, Difference{Origin: l.Origin, Key: l.Key, Field: "packages[" + id + "]", Locked: l.Packages[id].String(), Now: n.Packages[id].String()})
			}
		}
		refs := map[string]bool{}
		for r := range l.PublishedSkills {
			refs[r] = true
		}
		for r := range n.PublishedSkills {
			refs[r] = true
		}
		for _, r := range sortedKeys(refs) {
			if l.PublishedSkills[r] != n.PublishedSkills[r] {
				out = append(out, Difference{Origin: l.Origin, Key: l.Key, Field: "publishedSkills[" + r + "]", Locked: l.PublishedSkills[r], Now: n.PublishedSkills[r]})
			}
		}
	}
	for _, n := range now.Skills {
		if _, ok := lockBy[n.Origin+"\x00"+n.Key]; !ok {
			out = append(out, Difference{Origin: n.Origin, Key: n.Key, Field: "unlocked", Now: n.Digest})
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
