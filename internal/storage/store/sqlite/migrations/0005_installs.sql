-- The install tables: one row per imported skill version (content digest)
-- with its state and artefacts, and a counter that every install change
-- bumps so that the gateway can notice changes cheaply.
{{template "installs.sql" .}}