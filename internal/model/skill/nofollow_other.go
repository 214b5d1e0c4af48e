//go:build !unix

package skill

// oNoFollow is not available here; Load still checks the file is regular.
const oNoFollow = 0

// oNonBlock is not needed where FIFOs cannot be opened by name.
const oNonBlock = 0
