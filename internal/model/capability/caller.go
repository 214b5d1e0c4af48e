package capability

// Caller identifies who makes a capability call: the principal the call is
// decided for and the agent session it comes from (audited with it).
type Caller struct {
	Principal Principal
	SessionID string
}

// ReservedNames are the names of the gateway's own tools (the skill tools
// and the agent filesystem): a capability is never offered under one of
// them, so an upstream server cannot shadow them. The gateway's test holds
// this list to the tools it registers.
var ReservedNames = []string{
	"skill_list", "load_skill", "unload_skill",
	"ls", "read_file", "grep", "glob", "write_file", "edit_file",
}
