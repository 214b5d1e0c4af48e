CREATE TABLE rate_buckets (
	key    TEXT PRIMARY KEY,
	tokens {{.Float}} NOT NULL,
	at     {{.Int64}} NOT NULL
);
