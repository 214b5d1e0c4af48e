-- The install tables: one row per imported skill version (content digest)
-- with its state and artefacts, and a counter that every install change
-- bumps so that the gateway can notice changes cheaply.
CREATE TABLE installs (
		id           INTEGER PRIMARY KEY,
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
		created_at   INTEGER NOT NULL,
		updated_at   INTEGER NOT NULL
	);
	CREATE INDEX installs_key ON installs (key);
	CREATE INDEX installs_name ON installs (name);
	CREATE TABLE install_generation (
		id INTEGER PRIMARY KEY CHECK (id = 1),
		n  INTEGER NOT NULL
	);
	INSERT INTO install_generation (id, n) VALUES (1, 0);
