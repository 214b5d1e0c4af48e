-- The changes queue (changes a human decides on the admin changes page)
-- and what applied promote_provider changes registered: executors and
-- their backends. A backend's (executor, provider) pair is unique: an
-- executor has at most one registered backend per provider.
{{template "changes.sql" .}}