-- The changes queue (changes a human decides on the admin changes page)
-- and what applied promote_provider changes registered: executors and
-- their backends. An executor has at most one registered backend per
-- provider. (store/sqlite's migration 15.)
{{template "changes.sql" .}}