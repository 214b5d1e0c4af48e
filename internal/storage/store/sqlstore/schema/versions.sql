CREATE TABLE versions (
	id           {{.Serial}},
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
	valid        {{.Bool}} NOT NULL,
	enabled      {{.Bool}} NOT NULL,
	frontmatter  TEXT,
	diagnostics  TEXT NOT NULL,
	files        TEXT,
	current      {{.Bool}} NOT NULL,
	first_seen   {{.Int64}} NOT NULL,
	last_seen    {{.Int64}} NOT NULL,
	UNIQUE (dir, digest)
);
CREATE INDEX versions_root_current ON versions (root, current);
CREATE INDEX versions_key ON versions (key);
CREATE UNIQUE INDEX versions_one_current ON versions (dir) WHERE {{.Is "current"}};
