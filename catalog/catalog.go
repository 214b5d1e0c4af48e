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
// newline.
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
		b.WriteString("\n</location>\n</skill>")
	}
	b.WriteString("\n</available_skills>")
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
// {name, description, tier, invokable_by, source, category, version}.
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

// Report says what a budgeted catalog changed to fit.
type Report struct {
	Budget int `json:"budget"`
	Length int `json:"length"`
	// Shortened lists the skills whose descriptions were cut.
	Shortened []string `json:"shortened"`
	// Omitted lists the skills left out entirely, in catalog order.
	Omitted []string `json:"omitted"`
	// OverBudget is true when even one skill with a minimal description
	// does not fit; the catalog then holds that one skill anyway, since an
	// empty catalog would hide every skill.
	OverBudget bool `json:"over_budget"`
}

// minDescription is the shortest a description is cut to before skills
// are dropped: below it a description stops telling the model when to use
// the skill.
const minDescription = 60

// Budget renders items within budget characters (code points). It first
// shortens the longest descriptions, evenly, down to a floor; only then does
// it drop skills from the end of the list. It never returns an empty catalog
// when items is not empty. budget <= 0 means no limit.
func Budget(items []Item, f Format, budget int) (string, Report) {
	rep := Report{Budget: budget, Shortened: []string{}, Omitted: []string{}}
	out := Render(items, f)
	if budget <= 0 || utf8.RuneCountInString(out) <= budget || len(items) == 0 {
		rep.Length = utf8.RuneCountInString(out)
		return out, rep
	}
	kept := append([]Item(nil), items...)
	for len(kept) > 0 {
		// Find the largest per-description cap that fits.
		lo, hi := minDescription, maxDesc(kept)
		if fits(kept, f, lo, budget) {
			for lo < hi {
				mid := (lo + hi + 1) / 2
				if fits(kept, f, mid, budget) {
					lo = mid
				} else {
					hi = mid - 1
				}
			}
			capped := capAll(kept, lo)
			for i := range kept {
				if capped[i].Description != kept[i].Description {
					rep.Shortened = append(rep.Shortened, kept[i].Name)
				}
			}
			out = Render(capped, f)
			rep.Length = utf8.RuneCountInString(out)
			return out, rep
		}
		if len(kept) == 1 {
			break
		}
		rep.Omitted = append([]string{kept[len(kept)-1].Name}, rep.Omitted...)
		kept = kept[:len(kept)-1]
	}
	capped := capAll(kept, minDescription)
	if capped[0].Description != kept[0].Description {
		rep.Shortened = append(rep.Shortened, kept[0].Name)
	}
	out = Render(capped, f)
	rep.Length = utf8.RuneCountInString(out)
	rep.OverBudget = true
	return out, rep
}

func maxDesc(items []Item) int {
	m := 0
	for _, it := range items {
		if n := utf8.RuneCountInString(it.Description); n > m {
			m = n
		}
	}
	return m
}

func fits(items []Item, f Format, limit, budget int) bool {
	return utf8.RuneCountInString(Render(capAll(items, limit), f)) <= budget
}

// capAll shortens every description longer than limit code points to
// limit, ending in an ellipsis.
func capAll(items []Item, limit int) []Item {
	out := make([]Item, len(items))
	copy(out, items)
	for i := range out {
		out[i].Description = shorten(out[i].Description, limit)
	}
	return out
}

func shorten(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	cut := strings.TrimRight(string(r[:limit-1]), " ,;:.-")
	return cut + "…"
}
