package catalog

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/platform/plural"
)

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

// Budget renders items within budget characters (code points). It first
// shortens the longest descriptions, evenly, down to a floor; only then does
// it drop skills from the end of the list. It never returns an empty catalog
// when items is not empty. budget <= 0 means no limit.
//
// The catalog kept is the longest prefix of items that fits with every
// description cut to the floor, and the cap on descriptions is the largest
// with which that prefix fits. Both are found from per-item lengths (see
// [sizes]) rather than by rendering, so a budgeted catalog of n skills costs
// one rendering of what is kept plus O(n log d) for descriptions of up to d
// code points, whatever the budget.
func Budget(items []Item, f Format, budget int) (string, Report) {
	rep := Report{Budget: budget, Shortened: []string{}, Omitted: []string{}}
	var z *sizes
	if budget > 0 && len(items) > 0 {
		z = measure(items, f)
	}
	if z == nil || z.length(len(items), math.MaxInt) <= budget {
		out := Render(items, f)
		rep.Length = utf8.RuneCountInString(out)
		return out, rep
	}
	limit := minDescription
	k := z.longestPrefix(limit, budget)
	if k == 0 {
		k, rep.OverBudget = 1, true
	} else {
		// The largest per-description cap with which the prefix fits.
		lo, hi := minDescription, z.maxRunes(k)
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if z.length(k, mid) <= budget {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		limit = lo
	}
	kept := make([]Item, k)
	copy(kept, items)
	for i := range kept {
		if d := shorten(kept[i].Description, limit); d != kept[i].Description {
			kept[i].Description = d
			rep.Shortened = append(rep.Shortened, kept[i].Name)
		}
	}
	for _, it := range items[k:] {
		rep.Omitted = append(rep.Omitted, it.Name)
	}
	out := Render(kept, f)
	rep.Length = utf8.RuneCountInString(out)
	return out, rep
}

// sizes holds what the rendered length of a catalog is made of, so that the
// length of any prefix of it, with descriptions cut to any cap, is a sum
// rather than a rendering. Both renderings are additive: a fixed frame
// (XML's <available_skills> element; JSON's "[\n" and "\n]"), plus per item
// a part that does not depend on the description (markup, name, location,
// the other fields; JSON's ",\n" between items) and the description as
// rendered.
type sizes struct {
	frame int
	items []itemSize
	costs *runeCosts
}

// itemSize is one item's share of a rendered catalog.
type itemSize struct {
	desc  string
	runes int // code points in desc
	fixed int // the item's rendered length without its description
	full  int // desc's rendered length, uncut
	// plain is true when every byte of desc is ASCII rendered as itself,
	// so that a cut's length is found without reading the description.
	plain bool
}

// measure computes the sizes of items rendered in format f.
func measure(items []Item, f Format) *sizes {
	z := &sizes{items: make([]itemSize, len(items)), costs: &xmlCosts}
	if f == FormatJSON {
		z.costs = &jsonCosts
		// "[\n" + items joined by ",\n" + "\n]": count the separator with
		// each item and take it off the frame.
		z.frame = len("[\n\n]") - len(",\n")
	} else {
		z.frame = utf8.RuneCountInString(XML(nil))
	}
	xmlItem := utf8.RuneCountInString(XML([]Item{{}})) - z.frame
	for i, it := range items {
		s := &z.items[i]
		s.desc = it.Description
		s.full, s.runes, s.plain = z.costs.text(it.Description)
		if f == FormatJSON {
			it.Description = ""
			b, _ := json.MarshalIndent([]Item{it}, "", "  ")
			// b holds the item with an empty description ("") between
			// "[\n" and "\n]"; the description's characters are added by
			// descLen.
			s.fixed = utf8.RuneCount(b) - len("[\n\n]") + len(",\n")
		} else {
			s.fixed = xmlItem + utf8.RuneCountInString(escape(it.Name)) + utf8.RuneCountInString(it.Location) + xmlTrustLen(it.Trust)
		}
	}
	return z
}

// length is the rendered length of the first k items with every
// description cut to limit code points.
func (z *sizes) length(k, limit int) int {
	n := z.frame
	for i := range z.items[:k] {
		n += z.items[i].fixed + z.descLen(&z.items[i], limit)
	}
	return n
}

// longestPrefix returns the largest k whose first k items, descriptions cut
// to limit, fit budget; 0 when not even the first does.
func (z *sizes) longestPrefix(limit, budget int) int {
	n := z.frame
	for i := range z.items {
		n += z.items[i].fixed + z.descLen(&z.items[i], limit)
		if n > budget {
			return i
		}
	}
	return len(z.items)
}

// maxRunes is the longest description among the first k items, in code
// points.
func (z *sizes) maxRunes(k int) int {
	m := 0
	for i := range z.items[:k] {
		m = max(m, z.items[i].runes)
	}
	return m
}

// descLen is the rendered length of shorten(s.desc, limit).
func (z *sizes) descLen(s *itemSize, limit int) int {
	if s.runes <= limit {
		return s.full
	}
	if s.plain {
		// Every byte is one code point rendered as one: the cut keeps
		// limit-1 bytes less the trailing ones shorten trims.
		m := limit - 1
		for m > 0 && strings.IndexByte(trimmed, s.desc[m-1]) >= 0 {
			m--
		}
		return m + z.costs.ellipsis
	}
	// shorten converts to runes: an invalid byte becomes U+FFFD, a valid
	// code point rendered as one character.
	n, kept, seen := 0, 0, 0
	for _, r := range s.desc {
		if seen == limit-1 {
			break
		}
		seen++
		n += z.costs.rune(r)
		if r >= utf8.RuneSelf || strings.IndexByte(trimmed, byte(r)) < 0 {
			kept = n
		}
	}
	return kept + z.costs.ellipsis
}

// runeCosts is how many characters one code point of a description takes
// in a rendering. The tables are filled from the renderers themselves
// ([escape], encoding/json), so they cannot disagree with them.
type runeCosts struct {
	ascii    [utf8.RuneSelf]int
	lineSep  int // U+2028 and U+2029 (JSON escapes them)
	invalid  int // a byte that is not UTF-8
	ellipsis int
}

var (
	xmlCosts  = newRuneCosts(func(s string) int { return utf8.RuneCountInString(escape(s)) })
	jsonCosts = newRuneCosts(func(s string) int {
		b, _ := json.Marshal(s)
		return utf8.RuneCount(b) - len(`""`)
	})
)

func newRuneCosts(render func(string) int) runeCosts {
	var c runeCosts
	for i := range c.ascii {
		c.ascii[i] = render(string(rune(i)))
	}
	c.lineSep = render("\u2028")
	c.invalid = render("\xff")
	c.ellipsis = render(ellipsis)
	return c
}

// rune is the rendered length of a valid code point r.
func (c *runeCosts) rune(r rune) int {
	switch {
	case r < utf8.RuneSelf:
		return c.ascii[r]
	case r == '\u2028' || r == '\u2029':
		return c.lineSep
	}
	return 1
}

// text returns the rendered length of s, its length in code points, and
// whether s is ASCII rendered byte for byte.
func (c *runeCosts) text(s string) (length, runes int, plain bool) {
	plain = true
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			length += c.ascii[b]
			plain = plain && c.ascii[b] == 1
			runes++
			i++
			continue
		}
		plain = false
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			length += c.invalid
		} else {
			length += c.rune(r)
		}
		runes++
		i += w
	}
	return length, runes, plain
}

// WriteText writes, as 'skillgate prompt' reports on stderr, what fitting
// the catalog in budget characters cost: descriptions shortened, skills
// left out, or a single skill that did not fit and was kept anyway.
func (rep Report) WriteText(w io.Writer, budget int) {
	if len(rep.Shortened) > 0 {
		fmt.Fprintf(w, "budget %d: shortened %s\n", budget, plural.Of(len(rep.Shortened), "description", "descriptions"))
	}
	if len(rep.Omitted) > 0 {
		fmt.Fprintf(w, "budget %d: left out %s: %s\n", budget, plural.Of(len(rep.Omitted), "skill", "skills"), strings.Join(rep.Omitted, ", "))
	}
	if rep.OverBudget {
		fmt.Fprintf(w, "budget %d: even one skill does not fit (%d characters); printed it anyway\n", budget, rep.Length)
	}
}
