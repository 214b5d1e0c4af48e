-- Rate-limit token buckets shared by every process on the store
-- (policy.Buckets).
CREATE TABLE rate_buckets (
		key    TEXT PRIMARY KEY,
		tokens REAL NOT NULL,
		at     INTEGER NOT NULL
	);
