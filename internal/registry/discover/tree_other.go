//go:build !linux

package discover

func openTree(dir string) (TreeFS, error) { return openRootTree(dir) }

// treesImpl has no shared root here: each tree is opened on its own.
type treesImpl struct{}

func openTrees(string) treesImpl                     { return treesImpl{} }
func (treesImpl) tree(string, string) (TreeFS, bool) { return nil, false }
func (treesImpl) close() error                       { return nil }
