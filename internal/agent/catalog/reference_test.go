package catalog_test

import (
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/agent/catalog"
)

// referenceBudget is catalog.Budget as it was before per-item lengths:
// it drops one skill per pass from the end and, for each candidate list,
// renders the whole catalog once per step of a binary search on the
// description cap. O(n² log d), but plainly correct; the differential tests
// hold the fast Budget to its output byte for byte.
func referenceBudget(items []catalog.Item, f catalog.Format, budget int) (string, catalog.Report) {
	rep := catalog.Report{Budget: budget, Shortened: []string{}, Omitted: []string{}}
	out := catalog.Render(items, f)
	if budget <= 0 || utf8.RuneCountInString(out) <= budget || len(items) == 0 {
		rep.Length = utf8.RuneCountInString(out)
		return out, rep
	}
	kept := append([]catalog.Item(nil), items...)
	for len(kept) > 0 {
		// Find the largest per-description cap that fits.
		lo, hi := refMinDescription, refMaxDesc(kept)
		if refFits(kept, f, lo, budget) {
			for lo < hi {
				mid := (lo + hi + 1) / 2
				if refFits(kept, f, mid, budget) {
					lo = mid
				} else {
					hi = mid - 1
				}
			}
			capped := refCapAll(kept, lo)
			for i := range kept {
				if capped[i].Description != kept[i].Description {
					rep.Shortened = append(rep.Shortened, kept[i].Name)
				}
			}
			out = catalog.Render(capped, f)
			rep.Length = utf8.RuneCountInString(out)
			return out, rep
		}
		if len(kept) == 1 {
			break
		}
		rep.Omitted = append([]string{kept[len(kept)-1].Name}, rep.Omitted...)
		kept = kept[:len(kept)-1]
	}
	capped := refCapAll(kept, refMinDescription)
	if capped[0].Description != kept[0].Description {
		rep.Shortened = append(rep.Shortened, kept[0].Name)
	}
	out = catalog.Render(capped, f)
	rep.Length = utf8.RuneCountInString(out)
	rep.OverBudget = true
	return out, rep
}

const refMinDescription = 60

func refMaxDesc(items []catalog.Item) int {
	m := 0
	for _, it := range items {
		if n := utf8.RuneCountInString(it.Description); n > m {
			m = n
		}
	}
	return m
}

func refFits(items []catalog.Item, f catalog.Format, limit, budget int) bool {
	return utf8.RuneCountInString(catalog.Render(refCapAll(items, limit), f)) <= budget
}

func refCapAll(items []catalog.Item, limit int) []catalog.Item {
	out := make([]catalog.Item, len(items))
	copy(out, items)
	for i := range out {
		out[i].Description = refShorten(out[i].Description, limit)
	}
	return out
}

func refShorten(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	cut := strings.TrimRight(string(r[:limit-1]), " ,;:.-")
	return cut + "…"
}
