// Package layering keeps skillgate's imports following the product's parts
// as the README's layout section writes them: its test reads the table of
// parts (in order, each one's folders) and the table of rules that forbid
// imports the order would allow, and the table of adapters that alone may
// import a package outside the module (cedar-go's experimental x/exp);
// lists the module's imports with `go list`, and fails when a package is in
// no part, imports a part below its own, makes an import a rule forbids, or
// (it or its tests) imports what only an adapter may. The package has no code of its own; the
// rule lives beside the document that states it, so the two cannot drift.
package layering
