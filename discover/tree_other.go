//go:build !linux

package discover

func openTree(dir string) (TreeFS, error) { return openRootTree(dir) }
