-- The schema of skillgate's SQLite store, one file a version, applied in
-- order and recorded in schema_migrations. Never edit one that has
-- shipped: add the next.
--
-- The registry: configured roots and the versions scanned under them.
-- Times are Unix nanoseconds; JSON values are TEXT, kept as written.
CREATE TABLE roots (
		path      TEXT PRIMARY KEY,
		scope     TEXT NOT NULL,
		position  INTEGER NOT NULL,
		last_scan INTEGER NOT NULL,
		notes     TEXT NOT NULL DEFAULT '[]'
	);
	CREATE TABLE versions (
		id           INTEGER PRIMARY KEY,
		key          TEXT NOT NULL,
		name         TEXT NOT NULL,
		description  TEXT NOT NULL,
		category     TEXT NOT NULL,
		version      TEXT NOT NULL,
		tier         INTEGER NOT NULL,
		invokable_by TEXT NOT NULL,
		root         TEXT NOT NULL REFERENCES roots(path) ON DELETE CASCADE,
		dir          TEXT NOT NULL,
		rel          TEXT NOT NULL,
		file         TEXT NOT NULL,
		digest       TEXT NOT NULL,
		fingerprint  TEXT NOT NULL,
		valid        INTEGER NOT NULL,
		enabled      INTEGER NOT NULL,
		frontmatter  TEXT,
		diagnostics  TEXT NOT NULL,
		files        TEXT,
		current      INTEGER NOT NULL,
		first_seen   INTEGER NOT NULL,
		last_seen    INTEGER NOT NULL,
		UNIQUE (dir, digest)
	);
	CREATE INDEX versions_root_current ON versions (root, current);
	CREATE INDEX versions_key ON versions (key);
	CREATE UNIQUE INDEX versions_one_current ON versions (dir) WHERE current = 1;
