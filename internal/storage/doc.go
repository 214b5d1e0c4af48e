// Package storage groups where skillgate keeps things: the store
// interface, its drivers (SQLite, the embedded default, and PostgreSQL) and
// their conformance suite (store), skill file storage on a local directory
// or S3 (blob), the shape of every key in the bucket and the one copy of a
// skill file into it (bucket), copies of skill trees between a blob store and elsewhere
// (blobsync), and the hash-chained audit log (audit).
//
// The part imports only platform and model: it must not import the
// registry, decisions or any service above it, so storage holds no business
// logic. Only the application (internal/app, cmd) chooses a driver.
package storage
