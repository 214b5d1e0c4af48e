//go:build !unix

package skill

// oNoFollow is not available here; Load still checks the file is regular.
const oNoFollow = 0
