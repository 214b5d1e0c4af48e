-- The packed refs of each root: its refs (Store.Refs) packed into one value
-- (refs.go), so a rescan reads one row instead of a row per skill. They go
-- with their root, and are rewritten in the transaction of every scan that
-- changes the root's versions (nothing else changes what they hold), so
-- they always agree with the versions table; roots below one another keep
-- none.
CREATE TABLE root_refs (
		root TEXT PRIMARY KEY REFERENCES roots(path) ON DELETE CASCADE,
		data BLOB NOT NULL
	);
