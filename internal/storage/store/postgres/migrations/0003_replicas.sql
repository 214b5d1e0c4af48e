-- Replicas: several skillgate processes on one database keep their caches
-- in step through change notifications, and share the documents that were
-- files of one data directory (the bearer tokens, the encrypted credential
-- store).

-- Shared documents by name ("tokens.json", "credentials.age"): content as
-- skillgate wrote it, and a revision bumped by every write.
CREATE TABLE shared_files (
	name       TEXT PRIMARY KEY,
	content    BYTEA NOT NULL,
	revision   BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);

-- Every transaction that changes what processes cache sends a notification
-- on the channel skillgate_changes, delivered when it commits: the payload
-- names what changed (registry, installs, policies, grants, file:NAME).
CREATE FUNCTION skillgate_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('skillgate_changes', TG_ARGV[0]);
	RETURN NULL;
END
$$;
CREATE FUNCTION skillgate_notify_file() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'DELETE' THEN
		PERFORM pg_notify('skillgate_changes', 'file:' || OLD.name);
	ELSE
		PERFORM pg_notify('skillgate_changes', 'file:' || NEW.name);
	END IF;
	RETURN NULL;
END
$$;

CREATE TRIGGER registry_changed AFTER INSERT OR UPDATE OR DELETE ON registry_generation
	FOR EACH STATEMENT EXECUTE FUNCTION skillgate_notify_change('registry');
CREATE TRIGGER installs_changed AFTER INSERT OR UPDATE OR DELETE ON install_generation
	FOR EACH STATEMENT EXECUTE FUNCTION skillgate_notify_change('installs');
CREATE TRIGGER policies_changed AFTER INSERT OR UPDATE OR DELETE ON policies
	FOR EACH STATEMENT EXECUTE FUNCTION skillgate_notify_change('policies');
-- A grant's use (used = used + 1, on every call it covers) is not a change
-- caches hold: only new, revoked, rescoped or removed grants notify.
CREATE TRIGGER grants_added AFTER INSERT OR DELETE ON grants
	FOR EACH STATEMENT EXECUTE FUNCTION skillgate_notify_change('grants');
CREATE TRIGGER grants_changed AFTER UPDATE ON grants
	FOR EACH ROW WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.principal IS DISTINCT FROM NEW.principal
		OR OLD.capability IS DISTINCT FROM NEW.capability OR OLD.args IS DISTINCT FROM NEW.args
		OR OLD.level IS DISTINCT FROM NEW.level OR OLD.expires_at IS DISTINCT FROM NEW.expires_at OR OLD.uses IS DISTINCT FROM NEW.uses)
	EXECUTE FUNCTION skillgate_notify_change('grants');
CREATE TRIGGER shared_file_changed AFTER INSERT OR UPDATE OR DELETE ON shared_files
	FOR EACH ROW EXECUTE FUNCTION skillgate_notify_file();
