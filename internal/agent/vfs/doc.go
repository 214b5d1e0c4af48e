// Package vfs is the agent filesystem: what an agent sees through the ls,
// read_file, grep, glob, write_file and edit_file tools. It reproduces the
// deepagents BackendProtocol of versions ≤0.4 (ls_info, read, grep_raw,
// glob_info, write, edit) with its exact output formats and error strings,
// over [github.com/skillgate/skillgate/internal/storage/blob] stores.
//
// # Routing
//
// One [FS] per session. Its mounts are routed by path prefix, longest first
// (as deepagents' CompositeBackend does): a read-write /workspace (the
// session's private prefix in a store, see [WorkspaceMount]), extra mounts
// from configuration (such as a read-only /ticket), and the loaded skills,
// each read-only at /skills/<name>. "ls /" lists the mount points, with
// /skills only while at least one skill is loaded. A path outside every
// mount is refused with deepagents' "Path must start with one of […]"
// message, listing only the visible mounts.
//
// # Loaded skills only
//
// The session layer passes the loaded skills as [SkillMount] values and
// swaps them with [FS.SetSkills] on load and unload. Only an exact name
// resolves: /skills/compraventa is the skill mounted as "compraventa", never
// a skill whose name merely ends in it (seed 003 matched by suffix; that bug
// is not reproduced). Names are unique within a session because the session
// layer chooses them so (for two loaded skills with the same leaf name in
// different categories it must pick distinct names). Anything under /skills
// that is not a loaded skill reads exactly as a missing file does ("Error:
// File '<path>' not found", an empty listing, no grep or glob hits), and
// writes anywhere under /skills get the same read-only refusal, so an agent
// cannot learn that an unloaded skill exists.
//
// # Formats (deepagents 0.4.12)
//
// Read prints `cat -n` rows: the line number right-aligned in six columns
// ("%6d"), a tab, the line; from the 0-based offset, at most limit lines
// (default 2,000); lines over 5,000 characters continue on rows labelled
// N.1, N.2, …; an empty file reads as "System reminder: File exists but has
// empty contents". A file over Options.MaxFileSize is streamed: the bound
// applies to the lines returned, not to the file. ls returns directories with a trailing "/", sorted.
// grep is a literal substring search. Write only creates. Edit needs a
// unique match unless replace_all. The tool-layer renderings (FormatLs,
// FormatGrep with files_with_matches / content / count, FormatGlob,
// FormatWrite, FormatEdit) are separate functions for the MCP layer.
//
// Deviations, on purpose: Read and grep split lines at "\n", "\r\n" and
// "\r" only (Python's splitlines also splits at \v, \f, \x1c–\x1e, \x85,
// U+2028 and U+2029, and 0.4's grep splits at "\n" only), so that grep and
// read always agree on line numbers; grep's match text is cut at 5,000
// characters; glob results are sorted by path (deepagents' state backend
// sorts by modification time, its composite and filesystem backends by
// path).
//
// # Errors
//
// Every method returns an [*Error]: Error() is the exact agent-facing text
// and Kind is a sentinel for [errors.Is]. The exact strings are:
//
//	Error: File '<path>' not found
//	Error: Line offset <offset> exceeds file length (<n> lines)
//	Cannot write to <path> because it already exists. Read and then make an edit, or write to a new path.
//	Error: String not found in file: '<old_string>'
//	Error: String '<old_string>' appears <k> times in file. Use replace_all=True to replace all instances, or provide a more specific string with surrounding context.
//	Error: Path traversal not allowed: <path>
//	Error: Windows absolute paths are not supported: <path>. Please use virtual paths starting with / (e.g., /workspace/file.txt)
//	Error: Path must start with one of ['/ticket/', '/workspace/']: <path>
//	Error: Path traversal not allowed in glob pattern
//	Error: '<path>' is a binary file (<media type>, <size> bytes) and cannot be read as text. Refer to it by path.
//	Error: Cannot modify '<path>': '<mount>' is mounted read-only
//	Error reading file '<path>': storage error   (also "writing", "editing"; the cause is logged, not shown)
//
// (The "Error: " prefix on path refusals is what deepagents' tools add to
// validate_path's message.)
//
// # Safety
//
// [CleanPath] refuses, before any I/O: "..", a leading "~", Windows drive
// paths, backslashes, percent-encoded dots, slashes, backslashes, percent
// signs (double encoding), control characters and overlong UTF-8, %uXXXX,
// NUL and other control characters, invalid UTF-8, paths over 4,096 bytes,
// 64 segments or 255-byte segments. Storage keys are the mount's prefix plus
// the cleaned path below the mount, so a resolved path never leaves its
// mount (FuzzResolve checks this). The local store refuses symbolic links
// that leave its root; the FS reports them as traversal.
//
// Reads are bounded by Options.MaxFileSize, grep by MaxGrepMatches and
// MaxGrepFiles, listings by MaxListEntries.
package vfs
