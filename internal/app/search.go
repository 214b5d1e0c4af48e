package app

import (
	"context"
	"errors"

	"github.com/skillgate/skillgate/internal/agent/catalog"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// Search bounds.
const (
	// DefaultSearchLimit is how many results 'skillgate search' prints
	// without --limit.
	DefaultSearchLimit = 20
)

// Search ranks the skills q lists by relevance to query ('skillgate
// search'): at most limit (1–registry.MaxPageLimit) of them, best first.
// A bad query or limit is a usage error.
func (a *App) Search(ctx context.Context, q registry.Query, query string, limit int) ([]registry.Ranked, error) {
	if limit < 1 || limit > registry.MaxPageLimit {
		return nil, Usagef("--limit must be between 1 and %d", registry.MaxPageLimit)
	}
	es, err := a.List(ctx, q)
	if err != nil {
		return nil, err
	}
	rs, err := registry.Rank(es, query)
	if errors.Is(err, registry.ErrBadPage) {
		return nil, Usagef("QUERY must be text of 1 to 512 bytes (words that say what the skill is for)")
	}
	if err != nil {
		return nil, err
	}
	return rs[:min(limit, len(rs))], nil
}

// RankedItems are ranked entries as the skill_list JSON agents get, each
// with its score.
func RankedItems(rs []registry.Ranked) []catalog.Item {
	es := make([]registry.Entry, len(rs))
	for i, r := range rs {
		es[i] = r.Entry
	}
	items := CatalogItems(es)
	for i, r := range rs {
		items[i].Score = float64(int(r.Score*100+0.5)) / 100
	}
	return items
}
