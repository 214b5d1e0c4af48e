CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	tenant     TEXT NOT NULL,
	agent      TEXT NOT NULL,
	tier       TEXT NOT NULL,
	created_at {{.Int64}} NOT NULL,
	updated_at {{.Int64}} NOT NULL
);
CREATE TABLE session_skills (
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	position   INTEGER NOT NULL,
	key        TEXT NOT NULL,
	mount      TEXT NOT NULL,
	loaded_at  {{.Int64}} NOT NULL,
	PRIMARY KEY (session_id, key),
	UNIQUE (session_id, mount)
);
