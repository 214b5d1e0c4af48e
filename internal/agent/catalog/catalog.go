// Package catalog renders the list of skills an agent may use: the
// skills-ref <available_skills> XML, the seed's skill_list JSON, and a
// budgeted catalog that fits a prompt's character budget.
package catalog

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Item is one skill in a catalog.
type Item struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tier        int      `json:"tier"`
	InvokableBy []string `json:"invokable_by"`
	// Source is the root directory the skill came from.
	Source   string `json:"source"`
	Category string `json:"category,omitempty"`
	Version  string `json:"version,omitempty"`
	// Trust is the skill's trust ("first_party", "imported"), from where it
	// came: agents may prefer a skill its operators vouch for. The XML
	// names it only above imported (see [XML]).
	Trust string `json:"trust,omitempty"`
	// Score is the skill's relevance to a skill_list query (BM25F, higher
	// is more relevant); 0 and left out without a query.
	Score float64 `json:"score,omitempty"`
	// Location is the absolute path of the skill's SKILL.md.
	Location string `json:"-"`
}

// Format is a catalog rendering.
type Format string

// Formats.
const (
	FormatXML  Format = "xml"
	FormatJSON Format = "json"
)

// ParseFormat accepts "xml" or "json".
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case FormatXML, FormatJSON:
		return Format(s), nil
	}
	return "", fmt.Errorf("unknown format %q: use xml or json", s)
}

// XML renders items exactly as skills-ref's to_prompt does: one token per
// line, HTML-escaped name and description, unescaped location, no trailing
// newline. A skill trusted above imported (first_party) has one more
// element after its location, <trust>; a skill without one is imported (or
// of a trust its caller did not set), so a catalog of imported skills is
// skills-ref's byte for byte.
func XML(items []Item) string {
	var b strings.Builder
	writeXML(&b, items)
	return b.String()
}

func writeXML(b *strings.Builder, items []Item) {
	b.WriteString("<available_skills>")
	for _, it := range items {
		b.WriteString("\n<skill>\n<name>\n")
		b.WriteString(escape(it.Name))
		b.WriteString("\n</name>\n<description>\n")
		b.WriteString(escape(it.Description))
		b.WriteString("\n</description>\n<location>\n")
		b.WriteString(it.Location)
		b.WriteString("\n</location>")
		if shownTrust(it.Trust) {
			b.WriteString("\n<trust>\n")
			b.WriteString(escape(it.Trust))
			b.WriteString("\n</trust>")
		}
		b.WriteString("\n</skill>")
	}
	b.WriteString("\n</available_skills>")
}

// shownTrust reports whether the XML names a trust: any set trust but
// imported, the default.
func shownTrust(t string) bool { return t != "" && t != "imported" }

// xmlTrustLen is the length of the <trust> element of an item of trust t.
func xmlTrustLen(t string) int {
	if !shownTrust(t) {
		return 0
	}
	return len("\n<trust>\n\n</trust>") + utf8.RuneCountInString(escape(t))
}

// escape is Python's html.escape(s, quote=True).
func escape(s string) string {
	if !strings.ContainsAny(s, `&<>"'`) {
		return s
	}
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;")
	return r.Replace(s)
}

// JSON renders items as the seed's skill_list: a JSON array of
// {name, description, tier, invokable_by, source, category, version, trust}.
func JSON(items []Item) string {
	if items == nil {
		items = []Item{}
	}
	b, _ := json.MarshalIndent(items, "", "  ")
	return string(b)
}

// Render renders items in format f.
func Render(items []Item, f Format) string {
	if f == FormatJSON {
		return JSON(items)
	}
	return XML(items)
}

// minDescription is the shortest a description is cut to before skills
// are dropped: below it a description stops telling the model when to use
// the skill.
const minDescription = 60

// shorten cuts s to limit code points, ending in an ellipsis, when it is
// longer; trailing spaces and punctuation before the ellipsis are dropped.
func shorten(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	cut := strings.TrimRight(string(r[:limit-1]), trimmed)
	return cut + ellipsis
}

// trimmed is what [shorten] trims before the ellipsis it appends.
const (
	trimmed  = " ,;:.-"
	ellipsis = "…"
)
