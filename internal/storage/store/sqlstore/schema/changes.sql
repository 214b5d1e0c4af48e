CREATE TABLE changes (
	id         {{.Serial}},
	kind       TEXT NOT NULL,
	state      TEXT NOT NULL,
	key        TEXT NOT NULL UNIQUE,
	subject    TEXT NOT NULL,
	summary    TEXT NOT NULL,
	proposal   TEXT NOT NULL,
	queued_by  TEXT NOT NULL,
	why        TEXT NOT NULL,
	created_at {{.Int64}} NOT NULL,
	decided_at {{.Int64}} NOT NULL DEFAULT 0,
	decided_by TEXT NOT NULL DEFAULT '',
	decision   TEXT NOT NULL DEFAULT ''
);
CREATE TABLE registered_executors (
	change_id  {{.Int64}} NOT NULL REFERENCES changes(id),
	executor   TEXT NOT NULL,
	definition TEXT NOT NULL DEFAULT ''
);
CREATE TABLE registered_backends (
	change_id {{.Int64}} NOT NULL REFERENCES changes(id),
	executor  TEXT NOT NULL,
	provider  TEXT NOT NULL,
	skill     TEXT NOT NULL,
	server    TEXT NOT NULL,
	tool      TEXT NOT NULL,
	arguments TEXT NOT NULL,
	UNIQUE (executor, provider)
);
