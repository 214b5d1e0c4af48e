-- The hash-chained audit log: one row per record, the hash chain in prev
-- and hash (package audit seals every record; the store computes no hash).
{{template "audit.sql" .}}