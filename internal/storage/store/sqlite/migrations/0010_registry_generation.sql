-- The registry generation: a counter bumped in the same transaction as any
-- change of what the registry serves (current versions, their enabled
-- state, the roots' scope and order), so that a process holding a catalog
-- built from the store knows, with one read of one row, whether it is
-- still current, also after a change made by another process on the same
-- data directory.
{{template "registry_generation.sql" .}}