// Package lineage finds what a skill under review descends from and what it
// changed: an Index of reference skills (skills the registry approved or
// scanned from a first_party root, and operator-configured reference
// roots), each kept as per-file sha256 digests and content fingerprints
// (winnowing over normalised tokens, so a re-indented copy matches), with
// an inverted index from fingerprint to references so that Nearest does not
// scan every reference. Compare turns a candidate and its nearest reference
// into a Derivation: "derived from X: N files identical, M changed, K
// added", each changed file with a unified diff and the candidate's added
// or changed line numbers, which layer 4 scans with stricter rules
// (issue 31, item 1).
//
// The package is pure logic plus one persisted file (Save, Load), written
// through internal/platform/atomicfile; it reads files only in ReadDir and
// when Derive loads a reference's files from its root.
package lineage
