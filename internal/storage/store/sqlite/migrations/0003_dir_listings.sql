-- Directory listings, since kept in discover's scan cache (scancache.go),
-- and dropped by migration 11.
CREATE TABLE dir_listings (
		root    TEXT NOT NULL REFERENCES roots(path) ON DELETE CASCADE,
		path    TEXT PRIMARY KEY,
		mtime   INTEGER NOT NULL,
		entries BLOB NOT NULL
	);
	CREATE INDEX dir_listings_root ON dir_listings (root);
