-- Per-file digests: the next scan parses again every current valid
-- version recorded before the file list held each file's own SHA-256
-- (store.Version.Files "digest", which the MCP Skills extension serves):
-- its fingerprint is cleared, so no directory matches it, and the packed
-- refs are dropped (a scan reads them again from the versions table). The
-- re-parse finds the same tree digest, so it updates the same row (the
-- file list with digests) and approvals pinned to the digest still hold.
-- Until that scan the extension computes the digests itself (see package
-- mcpskills).
UPDATE versions SET fingerprint = ''
		WHERE current = 1 AND valid = 1 AND files IS NOT NULL AND files != '[]' AND instr(files, '"digest"') = 0;
	DELETE FROM root_refs;
