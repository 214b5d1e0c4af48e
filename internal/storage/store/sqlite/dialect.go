package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/skillgate/skillgate/internal/storage/store/sqlstore"
)

// dialect is SQLite's [sqlstore.Dialect]. One writer holds the database at
// a time (transactions begin immediate), so it needs no locks of its own;
// booleans are the integers 1 and 0, which the partial indexes are written
// with; text holds any bytes as they are; statements are calls within the
// process, so rows are inserted one prepared statement each.
type dialect struct{}

var _ sqlstore.Dialect = dialect{}

func (dialect) Name() string                                       { return "sqlite" }
func (dialect) Rebind(q string) string                             { return sqlstore.RebindIntegerBooleans(q) }
func (dialect) EncodeText(s string) string                         { return s }
func (dialect) DecodeText(s string) string                         { return s }
func (dialect) ForUpdate() string                                  { return "" }
func (dialect) Arrays() bool                                       { return false }
func (dialect) BatchInserts() bool                                 { return false }
func (dialect) Lock(context.Context, *sql.Tx, sqlstore.Lock) error { return nil }

// IsUnique reports whether err is a violation of a unique constraint or
// primary key.
func (dialect) IsUnique(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}
