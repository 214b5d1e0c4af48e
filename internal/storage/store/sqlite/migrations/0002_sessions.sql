-- Agent sessions (store.SessionStore) and the skills loaded in each.
{{template "sessions.sql" .}}