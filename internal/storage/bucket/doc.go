// Package bucket owns the shape of every key skillgate writes to its blob
// store (a local directory or S3), and the one way a file of a skill tree
// is copied there. Everything that reads or writes the bucket takes its
// keys from here:
//
//	{tenant}/skills/{category}/{name}/...            a tenant's skill trees (libraries, sessions)
//	{tenant}/skill-versions/{category}/{name}.digest the digest the tree above holds
//	{tenant}/sessions/{sessionID}/workspace/...      a session's private workspace
//	{shared}skills/..., {shared}skill-versions/...   skills kept once for every tenant
//	_mirror/trees/{hex}/..., _mirror/trees/{hex}.tree  the scanned roots' valid skills, by digest
//	_loaded/trees/{hex}/..., _loaded/trees/{hex}.tree  the versions agents loaded, by digest
//	_global/imports/{key}/{hex}/..., .../{hex}.json  approved imported versions, their artefacts
//	                                                 and packages ({hex}/packages/{server}.tar.gz)
//
// A key built here is valid ([blob.ValidateKey]) or the function says which
// field is wrong, wrapping [blob.ErrInvalidKey].
package bucket
