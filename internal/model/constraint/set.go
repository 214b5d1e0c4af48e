package constraint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// Bounds on a constraint set. Parse refuses anything larger.
const (
	// MaxBytes bounds the JSON text of one set.
	MaxBytes = 64 << 10
	// MaxEntries bounds each list (allowedDomains, urlArgs, pathGlobs,
	// pathArgs, and the values of one argValues entry).
	MaxEntries = 256
	// MaxArgValues bounds the number of arguments argValues names.
	MaxArgValues = 64
	// MaxEntryBytes bounds each string entry.
	MaxEntryBytes = 1024
	// MaxRate bounds N in a rateLimit.
	MaxRate = 1_000_000
	// MaxGlobStars bounds the "**" segments of one glob.
	MaxGlobStars = 4
	// MaxGlobSegments bounds the segments of one glob.
	MaxGlobSegments = 64
)

// ErrInvalid is wrapped by every error of [Parse], [Set.Validate] and
// [Set.Compile]. The message names the field, the entry and the fix.
var ErrInvalid = errors.New("invalid constraints")

// DefaultPathArgs are the arguments pathGlobs applies to when pathArgs is
// absent.
var DefaultPathArgs = []string{"path", "paths", "source", "destination", "file", "directory"}

// AnyURLArg is the urlArgs entry that selects every string argument, at any
// depth, that is an absolute URL with a host. An absent urlArgs means
// ["*"].
const AnyURLArg = "*"

// Set is a constraint set as written in a manifest or a policy. A nil list
// or map restricts nothing; a non-nil one, even empty, restricts to its
// entries. The package documentation defines each field. Sets returned by
// [Parse] and [Intersect] are normalized: domains lower case without a
// trailing dot, lists sorted and without duplicates.
type Set struct {
	AllowedDomains []string            `json:"allowedDomains"`
	URLArgs        []string            `json:"urlArgs"`
	PathGlobs      []string            `json:"pathGlobs"`
	PathArgs       []string            `json:"pathArgs"`
	ArgValues      map[string][]string `json:"argValues"`
	// RateLimit is "N/second", "N/minute", "N/hour" or "N/day"; empty
	// means no limit.
	RateLimit string `json:"rateLimit"`
}

// IsZero reports whether s restricts nothing.
func (s Set) IsZero() bool {
	return s.AllowedDomains == nil && s.URLArgs == nil && s.PathGlobs == nil && s.PathArgs == nil &&
		s.ArgValues == nil && s.RateLimit == ""
}

// wire is the JSON form: absent fields are left out, present empty lists
// are kept (they mean "nothing allowed").
type wire struct {
	AllowedDomains *[]string            `json:"allowedDomains,omitempty"`
	URLArgs        *[]string            `json:"urlArgs,omitempty"`
	PathGlobs      *[]string            `json:"pathGlobs,omitempty"`
	PathArgs       *[]string            `json:"pathArgs,omitempty"`
	ArgValues      *map[string][]string `json:"argValues,omitempty"`
	RateLimit      string               `json:"rateLimit,omitempty"`
}

func ptr[T any](v T, present bool) *T {
	if !present {
		return nil
	}
	return &v
}

// MarshalJSON writes the fields that are present, in a fixed order, with
// argValues keys sorted, so equal sets give equal bytes.
func (s Set) MarshalJSON() ([]byte, error) {
	av := s.ArgValues
	if av != nil {
		av = make(map[string][]string, len(s.ArgValues))
		for k, v := range s.ArgValues {
			av[k] = nonNil(v)
		}
	}
	return json.Marshal(wire{
		AllowedDomains: ptr(nonNil(s.AllowedDomains), s.AllowedDomains != nil),
		URLArgs:        ptr(nonNil(s.URLArgs), s.URLArgs != nil),
		PathGlobs:      ptr(nonNil(s.PathGlobs), s.PathGlobs != nil),
		PathArgs:       ptr(nonNil(s.PathArgs), s.PathArgs != nil),
		ArgValues:      ptr(av, av != nil),
		RateLimit:      s.RateLimit,
	})
}

// UnmarshalJSON is [Parse].
func (s *Set) UnmarshalJSON(b []byte) error {
	v, err := Parse(b)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Parse decodes and validates a constraint set from untrusted JSON. It is
// strict: keys are case-sensitive, unknown and duplicate keys are refused,
// every list must be a JSON array of strings, sizes are bounded (see the
// Max constants), and every domain, glob, argument name and rate is checked.
// Empty input and JSON null give the zero Set. The returned Set is
// normalized. Errors wrap [ErrInvalid] and name the field and the fix.
func Parse(raw json.RawMessage) (Set, error) {
	if len(raw) > MaxBytes {
		return Set{}, fmt.Errorf("%w: the constraint set is %d bytes, limit %d; split it or shorten its lists", ErrInvalid, len(raw), MaxBytes)
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return Set{}, nil
	}
	if !utf8.Valid(trimmed) {
		return Set{}, fmt.Errorf("%w: the constraint set is not valid UTF-8", ErrInvalid)
	}
	fields, err := objectFields(trimmed, "the constraint set")
	if err != nil {
		return Set{}, err
	}
	var s Set
	for _, f := range fields {
		switch f.Key {
		case "allowedDomains":
			s.AllowedDomains, err = stringList(f.Key, f.Value)
		case "urlArgs":
			s.URLArgs, err = stringList(f.Key, f.Value)
		case "pathGlobs":
			s.PathGlobs, err = stringList(f.Key, f.Value)
		case "pathArgs":
			s.PathArgs, err = stringList(f.Key, f.Value)
		case "argValues":
			s.ArgValues, err = argValuesField(f.Value)
		case "rateLimit":
			str, ok := strictjson.String(f.Value)
			if !ok {
				err = fmt.Errorf("%w: rateLimit must be a string like \"10/minute\"", ErrInvalid)
			}
			if err == nil && str == "" {
				err = fmt.Errorf("%w: rateLimit is empty; leave it out for no limit, or write it like \"10/minute\"", ErrInvalid)
			}
			s.RateLimit = str
		default:
			return Set{}, fmt.Errorf("%w: unknown key %s; the keys are allowedDomains, urlArgs, pathGlobs, pathArgs, argValues and rateLimit (case-sensitive)", ErrInvalid, quote(f.Key))
		}
		if err != nil {
			return Set{}, err
		}
	}
	return s.normalize()
}

// objectFields reads one JSON object, refusing duplicate keys and trailing
// data, in the words of this package's errors.
func objectFields(b []byte, what string) ([]strictjson.Member, error) {
	members, err := strictjson.Object(b)
	switch {
	case err == nil:
		return members, nil
	case errors.Is(err, strictjson.ErrNotObject):
		return nil, fmt.Errorf("%w: %s must be a JSON object", ErrInvalid, what)
	case errors.Is(err, strictjson.ErrDuplicateKey):
		var se *strictjson.Error
		errors.As(err, &se)
		return nil, fmt.Errorf("%w: %s has the key %s twice; keep one", ErrInvalid, what, quote(se.Key))
	case errors.Is(err, strictjson.ErrTrailingData):
		return nil, fmt.Errorf("%w: %s has data after its closing brace", ErrInvalid, what)
	default:
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, what, err)
	}
}

func stringList(name string, b json.RawMessage) ([]string, error) {
	raw, err := strictjson.Array(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s must be an array of strings", ErrInvalid, name)
	}
	if len(raw) > MaxEntries {
		return nil, fmt.Errorf("%w: %s has %d entries, limit %d", ErrInvalid, name, len(raw), MaxEntries)
	}
	out := make([]string, 0, len(raw))
	for i, r := range raw {
		s, ok := strictjson.String(r)
		if !ok {
			return nil, fmt.Errorf("%w: %s[%d] must be a string", ErrInvalid, name, i)
		}
		out = append(out, s)
	}
	return out, nil
}

func argValuesField(b json.RawMessage) (map[string][]string, error) {
	fields, err := objectFields(b, "argValues")
	if err != nil {
		return nil, err
	}
	if len(fields) > MaxArgValues {
		return nil, fmt.Errorf("%w: argValues names %d arguments, limit %d", ErrInvalid, len(fields), MaxArgValues)
	}
	out := make(map[string][]string, len(fields))
	for _, f := range fields {
		vals, err := stringList("argValues."+f.Key, f.Value)
		if err != nil {
			return nil, err
		}
		out[f.Key] = vals
	}
	return out, nil
}

// Validate checks s as [Parse] does, for sets built in Go.
func (s Set) Validate() error {
	_, err := s.normalize()
	return err
}

// normalize validates s and returns it with domains canonical and lists
// sorted and deduplicated.
func (s Set) normalize() (Set, error) {
	var out Set
	var err error
	if s.AllowedDomains != nil {
		if len(s.AllowedDomains) > MaxEntries {
			return Set{}, fmt.Errorf("%w: allowedDomains has %d entries, limit %d", ErrInvalid, len(s.AllowedDomains), MaxEntries)
		}
		out.AllowedDomains = make([]string, 0, len(s.AllowedDomains))
		for i, d := range s.AllowedDomains {
			n, err := normalizeDomain(d)
			if err != nil {
				return Set{}, fmt.Errorf("%w: allowedDomains[%d] %s: %v", ErrInvalid, i, quote(d), err)
			}
			out.AllowedDomains = append(out.AllowedDomains, n)
		}
		out.AllowedDomains = sortedUnique(out.AllowedDomains)
	}
	if out.URLArgs, err = argNames("urlArgs", s.URLArgs, true); err != nil {
		return Set{}, err
	}
	if out.PathArgs, err = argNames("pathArgs", s.PathArgs, false); err != nil {
		return Set{}, err
	}
	if s.PathGlobs != nil {
		if len(s.PathGlobs) > MaxEntries {
			return Set{}, fmt.Errorf("%w: pathGlobs has %d entries, limit %d", ErrInvalid, len(s.PathGlobs), MaxEntries)
		}
		for i, g := range s.PathGlobs {
			if _, err := compileGlob(g); err != nil {
				return Set{}, fmt.Errorf("%w: pathGlobs[%d] %s: %v", ErrInvalid, i, quote(g), err)
			}
		}
		out.PathGlobs = sortedUnique(slices.Clone(s.PathGlobs))
	}
	if s.ArgValues != nil {
		if len(s.ArgValues) > MaxArgValues {
			return Set{}, fmt.Errorf("%w: argValues names %d arguments, limit %d", ErrInvalid, len(s.ArgValues), MaxArgValues)
		}
		out.ArgValues = make(map[string][]string, len(s.ArgValues))
		for name, vals := range s.ArgValues {
			if err := checkArgName(name); err != nil {
				return Set{}, fmt.Errorf("%w: argValues key %s: %v", ErrInvalid, quote(name), err)
			}
			if vals == nil {
				vals = []string{}
			}
			if len(vals) > MaxEntries {
				return Set{}, fmt.Errorf("%w: argValues.%s has %d values, limit %d", ErrInvalid, name, len(vals), MaxEntries)
			}
			for i, v := range vals {
				if len(v) > MaxEntryBytes {
					return Set{}, fmt.Errorf("%w: argValues.%s[%d] is %d bytes, limit %d", ErrInvalid, name, i, len(v), MaxEntryBytes)
				}
				if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
					return Set{}, fmt.Errorf("%w: argValues.%s[%d] must be UTF-8 text without NUL bytes", ErrInvalid, name, i)
				}
			}
			out.ArgValues[name] = sortedUnique(slices.Clone(vals))
		}
	}
	if s.RateLimit != "" {
		if _, err := ParseRate(s.RateLimit); err != nil {
			return Set{}, err
		}
		out.RateLimit = s.RateLimit
	}
	return out, nil
}

func argNames(field string, names []string, allowAny bool) ([]string, error) {
	if names == nil {
		return nil, nil
	}
	if len(names) > MaxEntries {
		return nil, fmt.Errorf("%w: %s has %d entries, limit %d", ErrInvalid, field, len(names), MaxEntries)
	}
	for i, n := range names {
		if allowAny && n == AnyURLArg {
			continue
		}
		if err := checkArgName(n); err != nil {
			return nil, fmt.Errorf("%w: %s[%d] %s: %v", ErrInvalid, field, i, quote(n), err)
		}
	}
	return sortedUnique(slices.Clone(names)), nil
}

func checkArgName(n string) error {
	switch {
	case n == "":
		return errors.New("an argument name is empty; write the top-level argument's name")
	case len(n) > 128:
		return errors.New("an argument name is longer than 128 bytes")
	case !utf8.ValidString(n) || strings.IndexFunc(n, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return errors.New("an argument name must be UTF-8 text without control characters")
	}
	return nil
}

func sortedUnique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// normalizeDomain checks an allowedDomains entry and returns it lower case
// without a trailing dot.
func normalizeDomain(d string) (string, error) {
	if len(d) > 255 {
		return "", errors.New("longer than 253 characters")
	}
	for i := 0; i < len(d); i++ {
		if d[i] >= utf8.RuneSelf {
			return "", errors.New("not ASCII; write an internationalized name in its punycode form (xn--…)")
		}
	}
	d = strings.ToLower(strings.TrimSuffix(d, "."))
	if ip, err := netip.ParseAddr(strings.Trim(d, "[]")); err == nil && !strings.Contains(d, "%") {
		return ip.String(), nil
	}
	wild := strings.HasPrefix(d, "*.")
	name := strings.TrimPrefix(d, "*.")
	if name == "" || d == "*" {
		return "", errors.New("\"*\" alone would allow every host; leave allowedDomains out instead, or name the domains")
	}
	if len(name) > 253 {
		return "", errors.New("longer than 253 characters")
	}
	labels := strings.Split(name, ".")
	if wild && len(labels) < 2 {
		return "", errors.New("a wildcard must keep at least two labels (\"*.example.com\", not \"*.com\")")
	}
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return "", err
		}
	}
	return d, nil
}

func checkLabel(l string) error {
	if l == "" {
		return errors.New("has an empty label; write it like api.github.com or *.example.com")
	}
	if len(l) > 63 {
		return fmt.Errorf("label %q is longer than 63 characters", l)
	}
	if l[0] == '-' || l[len(l)-1] == '-' {
		return fmt.Errorf("label %q starts or ends with a hyphen", l)
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			if c == '*' {
				return errors.New("\"*\" is allowed only as a whole first label (\"*.example.com\")")
			}
			return fmt.Errorf("label %q may hold only letters, digits, '-' and '_'; write it like api.github.com", l)
		}
	}
	return nil
}

// Rate is a parsed rateLimit: N events per unit.
type Rate struct {
	// N is the bucket size and the number of tokens added per unit.
	N int
	// Per is the unit: a second, a minute, an hour or a day.
	Per time.Duration
}

// IsZero reports whether r is "no limit".
func (r Rate) IsZero() bool { return r.N == 0 }

// PerSecond is the refill rate in tokens per second.
func (r Rate) PerSecond() float64 { return float64(r.N) / r.Per.Seconds() }

// String renders r as rateLimit text.
func (r Rate) String() string {
	if r.IsZero() {
		return ""
	}
	for _, u := range units {
		if u.per == r.Per {
			return strconv.Itoa(r.N) + "/" + u.name
		}
	}
	return strconv.Itoa(r.N) + "/" + r.Per.String()
}

// stricter reports whether r allows fewer events over time than o (a
// smaller bucket breaks a tie). The zero Rate is the loosest.
func (r Rate) stricter(o Rate) bool {
	switch {
	case o.IsZero():
		return !r.IsZero()
	case r.IsZero():
		return false
	}
	a, b := int64(r.N)*int64(o.Per/time.Second), int64(o.N)*int64(r.Per/time.Second)
	return a < b || a == b && r.N < o.N
}

var units = []struct {
	name string
	per  time.Duration
}{{"second", time.Second}, {"minute", time.Minute}, {"hour", time.Hour}, {"day", 24 * time.Hour}}

// ParseRate parses "N/second", "N/minute", "N/hour" or "N/day" with N from
// 1 to [MaxRate]. Errors wrap [ErrInvalid].
func ParseRate(s string) (Rate, error) {
	num, unit, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || num == "" || num[0] == '+' || num[0] == '-' {
		return Rate{}, fmt.Errorf("%w: rateLimit %s: write it as N/unit, like \"10/minute\"", ErrInvalid, quote(s))
	}
	if n < 1 || n > MaxRate {
		return Rate{}, fmt.Errorf("%w: rateLimit %s: N must be from 1 to %d", ErrInvalid, quote(s), MaxRate)
	}
	for _, u := range units {
		if u.name == unit {
			return Rate{N: n, Per: u.per}, nil
		}
	}
	return Rate{}, fmt.Errorf("%w: rateLimit %s: the unit must be second, minute, hour or day", ErrInvalid, quote(s))
}

// quote renders untrusted text for an error message, shortened.
func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strconv.Quote(s)
}

// cleanGlob reports whether g is written in cleaned form.
func cleanGlob(g string) bool { return path.Clean(g) == g }
