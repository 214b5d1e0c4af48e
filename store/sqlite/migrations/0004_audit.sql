-- The hash-chained audit log: one row per record, the hash chain in prev
-- and hash (package audit seals every record; the store computes no hash).
CREATE TABLE audit (
		seq        INTEGER PRIMARY KEY,
		time       INTEGER NOT NULL,
		actor      TEXT NOT NULL,
		session    TEXT NOT NULL,
		action     TEXT NOT NULL,
		subject    TEXT NOT NULL,
		decision   TEXT NOT NULL,
		reasons    TEXT NOT NULL,
		args_hash  TEXT NOT NULL,
		latency_ns INTEGER NOT NULL,
		data       TEXT,
		prev       TEXT NOT NULL,
		hash       TEXT NOT NULL
	);
	CREATE INDEX audit_subject ON audit (subject);
