package sqlstore_test

import (
	"testing"
	"testing/fstest"

	"github.com/skillgate/skillgate/internal/storage/store/sqlstore"
)

func TestRebind(t *testing.T) {
	for _, tt := range []struct{ in, numbered, integers string }{
		{`SELECT 1`, `SELECT 1`, `SELECT 1`},
		{`UPDATE v SET current = FALSE WHERE id = ? AND current = TRUE`,
			`UPDATE v SET current = FALSE WHERE id = $1 AND current = TRUE`,
			`UPDATE v SET current = 0 WHERE id = ? AND current = 1`},
		{`SELECT '?', "a?" FROM t WHERE x = ? AND y = 'TRUE' AND z = ?`,
			`SELECT '?', "a?" FROM t WHERE x = $1 AND y = 'TRUE' AND z = $2`,
			`SELECT '?', "a?" FROM t WHERE x = ? AND y = 'TRUE' AND z = ?`},
		{`SELECT true_count, t.false, truex FROM t WHERE true`,
			`SELECT true_count, t.false, truex FROM t WHERE true`,
			`SELECT true_count, t.false, truex FROM t WHERE 1`},
		{`SELECT 'it''s ?' WHERE a = ?`, `SELECT 'it''s ?' WHERE a = $1`, `SELECT 'it''s ?' WHERE a = ?`},
	} {
		if got := sqlstore.RebindNumbered(tt.in); got != tt.numbered {
			t.Errorf("RebindNumbered(%q) = %q, want %q", tt.in, got, tt.numbered)
		}
		if got := sqlstore.RebindIntegerBooleans(tt.in); got != tt.integers {
			t.Errorf("RebindIntegerBooleans(%q) = %q, want %q", tt.in, got, tt.integers)
		}
	}
}

func TestLoadMigrations(t *testing.T) {
	types := sqlstore.Types{Int64: "BIGINT", Float: "REAL", Bool: "BOOLEAN", Serial: "BIGINT PRIMARY KEY"}
	fsys := fstest.MapFS{
		"m/0001_first.sql":  {Data: []byte(`CREATE TABLE a (x {{.Int64}});`)},
		"m/0002_second.sql": {Data: []byte(`{{template "rate_buckets.sql" .}}`)},
	}
	ms, err := sqlstore.LoadMigrations(fsys, "m", types)
	if err != nil || len(ms) != 2 || ms[0] != `CREATE TABLE a (x BIGINT);` {
		t.Fatalf("LoadMigrations = %q, %v", ms, err)
	}
	if want := "CREATE TABLE rate_buckets (\n\tkey    TEXT PRIMARY KEY,\n\ttokens REAL NOT NULL,\n\tat     BIGINT NOT NULL\n);\n"; ms[1] != want {
		t.Errorf("shared definition rendered %q, want %q", ms[1], want)
	}
	fsys["m/0004_gap.sql"] = &fstest.MapFile{Data: []byte(`SELECT 1;`)}
	if _, err := sqlstore.LoadMigrations(fsys, "m", types); err == nil {
		t.Error("a gap in the versions was accepted")
	}
}
