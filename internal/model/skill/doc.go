// Package skill implements the Agent Skills format: finding a skill's
// SKILL.md, splitting and parsing its YAML frontmatter, validating it, and
// computing a content digest of the skill tree.
//
// Validation has two modes. [Strict] reproduces the reference validator
// skills-ref check for check and message for message, so that a tool built
// against it gets the same verdict from skillgate. [Lenient] follows the
// specification's client guide: it loads a skill with a cosmetic problem and
// reports it as a warning, and rejects only what makes a skill unusable.
//
// A quick tour:
//
//	s, err := skill.Load(ctx, "/path/to/my-skill", skill.Options{Mode: skill.Lenient})
//	if err != nil { ... }          // I/O errors only; a bad skill is not an error
//	if !s.Valid() { ... }          // s.Diagnostics says why, naming the field and the fix
//	fmt.Println(s.Name, s.Tier, s.InvokableBy, s.Digest)
//
// Everything read from disk is treated as hostile: sizes are bounded, the
// text must be UTF-8 without NUL bytes, YAML aliases are bounded, and
// symbolic links are never followed.
package skill
