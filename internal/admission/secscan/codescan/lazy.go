package codescan

import (
	"regexp"
	"sync"
)

// lazyRE returns a function that compiles expr at its first call and
// returns the same *regexp.Regexp from then on. The package's patterns are
// compiled when a script is first read, not at package initialisation,
// so that commands that never scan content do not pay for them.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
