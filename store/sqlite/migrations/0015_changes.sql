-- The changes queue (changes a human decides on the admin changes page)
-- and what applied promote_provider changes registered: executors and
-- their backends. A backend's (executor, provider) pair is unique: an
-- executor has at most one registered backend per provider.
CREATE TABLE changes (
		id         INTEGER PRIMARY KEY,
		kind       TEXT NOT NULL,
		state      TEXT NOT NULL,
		key        TEXT NOT NULL UNIQUE,
		subject    TEXT NOT NULL,
		summary    TEXT NOT NULL,
		proposal   TEXT NOT NULL,
		queued_by  TEXT NOT NULL,
		why        TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		decided_at INTEGER NOT NULL DEFAULT 0,
		decided_by TEXT NOT NULL DEFAULT '',
		decision   TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE registered_executors (
		change_id  INTEGER NOT NULL REFERENCES changes(id),
		executor   TEXT NOT NULL,
		definition TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE registered_backends (
		change_id INTEGER NOT NULL REFERENCES changes(id),
		executor  TEXT NOT NULL,
		provider  TEXT NOT NULL,
		skill     TEXT NOT NULL,
		server    TEXT NOT NULL,
		tool      TEXT NOT NULL,
		arguments TEXT NOT NULL,
		UNIQUE (executor, provider)
	);
