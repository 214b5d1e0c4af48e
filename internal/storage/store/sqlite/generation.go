package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrationRegistryGeneration creates the registry generation: a counter
// bumped in the same transaction as any change of what the registry serves
// (current versions, their enabled state, the roots' scope and order), so
// that a process holding a catalog built from the store knows, with one
// read of one row, whether it is still current — also after a change made
// by another process on the same data directory.
const migrationRegistryGeneration = `CREATE TABLE registry_generation (
		id INTEGER PRIMARY KEY CHECK (id = 1),
		n  INTEGER NOT NULL
	);
	INSERT INTO registry_generation (id, n) VALUES (1, 0);`

// RegistryGeneration implements [store.Store].
func (s *DB) RegistryGeneration(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT n FROM registry_generation WHERE id = 1`).Scan(&n); err != nil {
		return 0, fmt.Errorf("registry generation: %w", err)
	}
	return n, nil
}

// bumpRegistry increases the registry generation inside tx.
func bumpRegistry(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `UPDATE registry_generation SET n = n + 1 WHERE id = 1`); err != nil {
		return fmt.Errorf("registry generation: %w", err)
	}
	return nil
}
