-- sessions.last_used: attach, detach, a change of loaded skills and the
-- serving process's heartbeat move it, not every tool call. Existing
-- sessions start from their last change.
ALTER TABLE sessions ADD COLUMN last_used INTEGER NOT NULL DEFAULT 0;
	UPDATE sessions SET last_used = updated_at;
	CREATE INDEX sessions_last_used ON sessions (last_used);
