CREATE TABLE audit (
	seq        {{.Int64}} PRIMARY KEY,
	time       {{.Int64}} NOT NULL,
	actor      TEXT NOT NULL,
	session    TEXT NOT NULL,
	action     TEXT NOT NULL,
	subject    TEXT NOT NULL,
	decision   TEXT NOT NULL,
	reasons    TEXT NOT NULL,
	args_hash  TEXT NOT NULL,
	latency_ns {{.Int64}} NOT NULL,
	data       TEXT,
	prev       TEXT NOT NULL,
	hash       TEXT NOT NULL
);
CREATE INDEX audit_subject ON audit (subject);
