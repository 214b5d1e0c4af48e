-- Stored Cedar policies and approval grants (the store of package policy).
-- Times are Unix nanoseconds; 0 means "never" for expires_at and "not
-- revoked" for revoked_at. uses = 0 is unlimited.
{{template "policies.sql" .}}