package postgres

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
)

// ReadScanCache implements [store.ScanCache]: it returns root's record, or
// nil when there is none. Records live in the scan_cache table; a replica
// whose roots hold other files than the one that wrote a record only walks
// (discover checks every record it reads).
func (s *DB) ReadScanCache(ctx context.Context, root string) (io.ReadCloser, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, `SELECT record FROM scan_cache WHERE root = $1`, txt(root)).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan cache of %s: %w", root, err)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// WriteScanCache implements [store.ScanCache]: it replaces root's record,
// or removes it when record is empty.
func (s *DB) WriteScanCache(ctx context.Context, root string, record []byte) error {
	var err error
	if len(record) == 0 {
		_, err = s.db.ExecContext(ctx, `DELETE FROM scan_cache WHERE root = $1`, txt(root))
	} else {
		_, err = s.db.ExecContext(ctx, `INSERT INTO scan_cache (root, record) VALUES ($1, $2)
			ON CONFLICT (root) DO UPDATE SET record = excluded.record`, txt(root), record)
	}
	if err != nil {
		return fmt.Errorf("scan cache of %s: %w", root, err)
	}
	return nil
}
