//go:build !linux

package sandbox

// SessionNeeded is true where there is no sandbox to weigh it for: a new
// session is what bubblewrap, a Linux program, would be asked for.
func SessionNeeded() bool { return true }
