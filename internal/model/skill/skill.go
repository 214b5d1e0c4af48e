package skill

import (
	"encoding/json"
	"sort"
	"strings"
)

// Mode selects how strictly a SKILL.md is judged.
type Mode int

const (
	// Lenient follows the specification's client guide: cosmetic problems
	// are warnings and the skill loads; only what makes a skill unusable
	// (no name, no description, unreadable frontmatter, bad tier rules) is
	// an error. It is the default for discovery.
	Lenient Mode = iota
	// Strict reproduces the reference validator skills-ref: the same checks
	// in the same order with the same messages. skillgate's own checks on its
	// extensions are reported as warnings so they never change the verdict.
	Strict
)

// String returns "lenient" or "strict".
func (m Mode) String() string {
	if m == Strict {
		return "strict"
	}
	return "lenient"
}

// Severity says whether a diagnostic rejects the skill.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Diagnostic is one finding about a skill. Message is the user-facing text;
// in strict mode error messages are exactly skills-ref's.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	// Field is the frontmatter key concerned ("metadata.tier"), or empty when
	// the finding is about the file as a whole.
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// Spec field names and the reference validator's allowed set.
const (
	FieldName          = "name"
	FieldDescription   = "description"
	FieldLicense       = "license"
	FieldCompatibility = "compatibility"
	FieldMetadata      = "metadata"
	FieldAllowedTools  = "allowed-tools"
)

// specFields is the set skills-ref accepts, sorted as it prints it.
var specFields = []string{FieldAllowedTools, FieldCompatibility, FieldDescription, FieldLicense, FieldMetadata, FieldName}

// Skill is a parsed and validated SKILL.md with its extensions normalised.
type Skill struct {
	// Dir is the skill directory and File the path of its SKILL.md.
	Dir  string `json:"dir,omitempty"`
	File string `json:"file,omitempty"`

	Name          string            `json:"name"`
	Description   string            `json:"description"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	AllowedTools  []string          `json:"allowed_tools,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`

	// Tier is who may invoke the skill: 1, 2 (the default) or 3.
	Tier int `json:"tier"`
	// InvokableBy lists the agent tiers allowed to invoke it, sorted.
	InvokableBy []AgentTier `json:"invokable_by"`
	// Category groups skills; from the frontmatter, else from the directory.
	Category string `json:"category,omitempty"`
	// Version is the semver label from the frontmatter, if any.
	Version string `json:"version,omitempty"`

	// Frontmatter holds every key as written, unknown keys included.
	Frontmatter *Map `json:"frontmatter,omitempty"`
	// Body is the Markdown after the frontmatter, trimmed.
	Body string `json:"-"`

	// Digest is "sha256:<hex>" over the skill tree; empty until computed.
	Digest string `json:"digest,omitempty"`

	Diagnostics []Diagnostic `json:"diagnostics"`
}

// Valid reports whether no diagnostic is an error.
func (s *Skill) Valid() bool {
	for _, d := range s.Diagnostics {
		if d.Severity == SeverityError {
			return false
		}
	}
	return true
}

// Errors returns the messages of the error diagnostics, in order.
func (s *Skill) Errors() []string {
	var out []string
	for _, d := range s.Diagnostics {
		if d.Severity == SeverityError {
			out = append(out, d.Message)
		}
	}
	return out
}

// Warnings returns the messages of the warning diagnostics, in order.
func (s *Skill) Warnings() []string {
	var out []string
	for _, d := range s.Diagnostics {
		if d.Severity == SeverityWarning {
			out = append(out, d.Message)
		}
	}
	return out
}

// ID is the skill's identity within a tenant: "category/name", or the
// name alone when it has no category.
func (s *Skill) ID() string {
	if s.Category == "" {
		return s.Name
	}
	return s.Category + "/" + s.Name
}

func (s *Skill) errorf(field, msg string) {
	s.Diagnostics = append(s.Diagnostics, Diagnostic{Severity: SeverityError, Field: field, Message: msg})
}

func (s *Skill) warnf(field, msg string) {
	s.Diagnostics = append(s.Diagnostics, Diagnostic{Severity: SeverityWarning, Field: field, Message: msg})
}

// addf reports an error in lenient mode and a warning in strict mode: for
// skillgate's own checks, which must not change skills-ref's verdict.
func (s *Skill) addf(mode Mode, field, msg string) {
	if mode == Strict {
		s.warnf(field, msg)
		return
	}
	s.errorf(field, msg)
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// sortedKeys returns the keys of m sorted bytewise, which for UTF-8 is
// code-point order, as Python's sorted() uses.
func sortedKeys(keys []string) []string {
	out := append([]string(nil), keys...)
	sort.Strings(out)
	return out
}

// pyStrip trims what Python's str.strip() trims.
func pyStrip(s string) string {
	return strings.TrimFunc(s, pyIsSpace)
}
