CREATE TABLE registry_generation (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  {{.Int64}} NOT NULL
);
INSERT INTO registry_generation (id, n) VALUES (1, 0);
