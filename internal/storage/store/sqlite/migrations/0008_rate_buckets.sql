-- Rate-limit token buckets shared by every process on the store
-- (policy.Buckets).
{{template "rate_buckets.sql" .}}