-- The schema of skillgate's PostgreSQL store: the tables of store/sqlite's
-- migrations 1 to 14, as they stand; the definitions both stores share
-- are store/sqlstore's schema/*.sql, rendered with PostgreSQL's types.
-- Times are Unix nanoseconds (BIGINT), as in SQLite, so both stores order
-- and compare them alike; JSON values are TEXT, kept byte for byte as
-- written.

-- The registry: configured roots and the versions scanned under them.
CREATE TABLE roots (
	path      TEXT PRIMARY KEY,
	scope     TEXT NOT NULL,
	trust     TEXT NOT NULL DEFAULT 'imported',
	position  INTEGER NOT NULL,
	last_scan BIGINT NOT NULL,
	notes     TEXT NOT NULL DEFAULT '[]'
);
{{template "versions.sql" .}}
-- The registry generation: bumped in the transaction of every change of
-- what the registry serves, read by every process to know its catalog is
-- current.
{{template "registry_generation.sql" .}}
-- discover's scan records, one per root (store.ScanCache).
CREATE TABLE scan_cache (
	root   TEXT PRIMARY KEY,
	record BYTEA NOT NULL
);

-- Agent sessions and the skills they loaded.
{{template "sessions.sql" .}}ALTER TABLE sessions ADD COLUMN last_used BIGINT NOT NULL;
CREATE INDEX sessions_last_used ON sessions (last_used);

-- The hash-chained audit log (package audit seals every record).
{{template "audit.sql" .}}
-- Installs: one row per imported skill version, its state and artefacts.
{{template "installs.sql" .}}ALTER TABLE installs ADD COLUMN provenance TEXT;

-- Stored Cedar policies and approval grants. 0 means "never" for
-- expires_at and "not revoked" for revoked_at; uses = 0 is unlimited.
{{template "policies.sql" .}}
-- Rate-limit token buckets shared by every process on the store.
{{template "rate_buckets.sql" .}}