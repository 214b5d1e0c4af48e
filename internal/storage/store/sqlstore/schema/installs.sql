CREATE TABLE installs (
	id           {{.Serial}},
	key          TEXT NOT NULL,
	name         TEXT NOT NULL,
	category     TEXT NOT NULL,
	description  TEXT NOT NULL,
	label        TEXT NOT NULL,
	digest       TEXT NOT NULL UNIQUE,
	tier         INTEGER NOT NULL,
	invokable_by TEXT NOT NULL,
	dir          TEXT NOT NULL,
	source       TEXT NOT NULL,
	state        TEXT NOT NULL,
	reason       TEXT NOT NULL,
	proposed     TEXT,
	manifest     TEXT,
	report       TEXT,
	pending      TEXT,
	blocked      TEXT NOT NULL DEFAULT '{}',
	created_at   {{.Int64}} NOT NULL,
	updated_at   {{.Int64}} NOT NULL
);
CREATE INDEX installs_key ON installs (key);
CREATE INDEX installs_name ON installs (name);
CREATE TABLE install_generation (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  {{.Int64}} NOT NULL
);
INSERT INTO install_generation (id, n) VALUES (1, 0);
