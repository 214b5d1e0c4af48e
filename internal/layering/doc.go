// Package layering keeps skillgate's imports pointing down the layers that
// the README's layout section writes: its test reads the table of layers
// there and fails when a package imports one of its own layer or above, or
// when a package is in no layer. The package has no code of its own; the
// rule lives beside the document that states it, so the two cannot drift.
package layering
