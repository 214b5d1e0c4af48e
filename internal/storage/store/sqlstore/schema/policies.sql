CREATE TABLE policies (
	id         TEXT PRIMARY KEY,
	text       TEXT NOT NULL,
	updated_at {{.Int64}} NOT NULL
);
CREATE TABLE grants (
	id         TEXT PRIMARY KEY,
	principal  TEXT NOT NULL,
	capability TEXT NOT NULL,
	args       TEXT,
	level      TEXT NOT NULL,
	expires_at {{.Int64}} NOT NULL DEFAULT 0,
	uses       INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0),
	used       INTEGER NOT NULL DEFAULT 0 CHECK (used >= 0),
	reason     TEXT NOT NULL DEFAULT '',
	created_by TEXT NOT NULL DEFAULT '',
	created_at {{.Int64}} NOT NULL,
	revoked_at {{.Int64}} NOT NULL DEFAULT 0
);
CREATE INDEX grants_active ON grants (revoked_at, created_at);
