-- Where an install came from: source, ref, commit, archive digest, fetch
-- time.
ALTER TABLE installs ADD COLUMN provenance TEXT;
