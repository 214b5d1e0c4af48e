package capability

// GrantAccess is what a [Grant] lets a confined server do with a host
// path.
type GrantAccess string

// The closed set of grant accesses.
const (
	// GrantReadOnly makes the path visible to the server, read-only.
	GrantReadOnly GrantAccess = "read-only"
	// GrantReadWrite lets the server write under the path too.
	GrantReadWrite GrantAccess = "read-write"
)

// Grant is one host path that a server's declaration (its args and its
// literal env values, never a credential) makes visible in its sandbox at
// call time, bound at the same path. The sandbox computes them (package
// sandbox, Grants) and the review shows them, so that what a human
// approves is what the server gets.
type Grant struct {
	// Path is the host path as the declaration names it (for an env value
	// naming a file, the directory that holds it); the server sees it at
	// this path.
	Path string `json:"path"`
	// Access is read-only or read-write.
	Access GrantAccess `json:"access"`
	// From names what in the declaration grants it: "args[2]",
	// "args[0] (its node_modules tree)" or "env MEMORY_FILE_PATH".
	From string `json:"from"`
}
