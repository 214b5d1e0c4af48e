package registry_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// TestSnapshotPageAfter checks that a page asked for After an identity is
// the page the cursor of the previous page gives, with or without filters,
// including after an identity that is not in the pool.
func TestSnapshotPageAfter(t *testing.T) {
	reg, _, _ := scanned(t)
	snap, err := reg.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []registry.PageQuery{
		{AgentTier: skill.T3, Limit: 4},
		{AgentTier: skill.T1, Limit: 3},
		{AgentTier: skill.T3, Tier: 1, Limit: 1},
	} {
		first, err := snap.Page(q)
		if err != nil {
			t.Fatal(err)
		}
		byCursor, byAfter := q, q
		byCursor.Cursor = first.NextCursor
		byAfter.After = first.Skills[len(first.Skills)-1].Key
		a, errA := snap.Page(byCursor)
		b, errB := snap.Page(byAfter)
		if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("%+v: by cursor %v %v, after %q %v %v", q, keys(a.Skills), errA, byAfter.After, keys(b.Skills), errB)
		}
	}
	p, err := snap.Page(registry.PageQuery{AgentTier: skill.T3, After: "docs/b", Limit: 2})
	if got := keys(p.Skills); err != nil || !reflect.DeepEqual(got, []string{"docs/beta", "docs/gamma"}) || p.NextCursor == "" {
		t.Errorf("after docs/b: %v %q %v", got, p.NextCursor, err)
	}
}
