package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/skillgate/skillgate/internal/storage/store/sqlstore"
)

// dialect is PostgreSQL's [sqlstore.Dialect]: numbered placeholders, the
// registry's text encoded (see textMark), advisory locks between
// processes and row locks within them, arrays bound as one value, and
// rows written together inserted in one statement.
type dialect struct{}

var _ sqlstore.Dialect = dialect{}

func (dialect) Name() string               { return "postgres" }
func (dialect) Rebind(q string) string     { return sqlstore.RebindNumbered(q) }
func (dialect) EncodeText(s string) string { return txt(s) }
func (dialect) DecodeText(s string) string { return untxt(s) }
func (dialect) ForUpdate() string          { return " FOR UPDATE" }
func (dialect) Arrays() bool               { return true }
func (dialect) BatchInserts() bool         { return true }

// Advisory lock keys (pg_advisory_xact_lock), one per serialized kind of
// change. Their values are arbitrary but fixed: every skillgate process
// on a database must agree on them.
const (
	lockMigrate int64 = 0x736b67_01 // "skg" 1: schema migrations
	lockAudit   int64 = 0x736b67_02 // the audit log's hash chain
	lockScan    int64 = 0x736b67_03 // scans of the registry
)

// Lock takes the transaction-scoped advisory lock of l.
func (dialect) Lock(ctx context.Context, tx *sql.Tx, l sqlstore.Lock) error {
	var key int64
	switch l {
	case sqlstore.LockMigrate:
		key = lockMigrate
	case sqlstore.LockAudit:
		key = lockAudit
	case sqlstore.LockScan:
		key = lockScan
	default:
		return fmt.Errorf("advisory lock: unknown lock %d", l)
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, key); err != nil {
		return fmt.Errorf("advisory lock: %w", err)
	}
	return nil
}

// IsUnique reports whether err is a unique constraint's violation: a row
// another transaction wrote first.
func (dialect) IsUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
