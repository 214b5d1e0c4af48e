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
{{template "versions.sql" .}}