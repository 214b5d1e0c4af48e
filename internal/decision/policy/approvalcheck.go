package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// ErrApprovalSettings is wrapped by the errors of [CheckApproval]: an
// operator's constraints or call approval default that the engine could
// not enforce as meant.
var ErrApprovalSettings = errors.New("approval settings refused")

// CheckApproval checks the constraints and call approval default an
// operator approves for capability c against the rules the engine
// decides with, before they are recorded: the constraints compile;
// every argument they name (argValues, pathArgs, urlArgs) is one c
// takes by its approved input schema, since argValues on an argument c
// does not take refuses every call, and pathGlobs or allowedDomains that
// check no argument c takes restrict nothing; and "never" does not waive
// the grant of a destructive capability. The error names the capability,
// the setting and the fix.
func CheckApproval(c Capability) error {
	name := c.ExtensionID + "/" + c.CapabilityID
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{ErrApprovalSettings, name}, args...)...)
	}
	a, err := capability.ParseCallApproval(string(c.Approval))
	if err != nil {
		return bad("%v", err)
	}
	if a == capability.CallApprovalNever && c.RiskLevel.Compare(capability.RiskDestructive) >= 0 {
		return bad("approval never cannot waive the grant of a %s capability: every destructive call needs a human's grant; use by-risk or always", c.RiskLevel)
	}
	if c.Constraints.IsZero() {
		return nil
	}
	if _, err := c.Constraints.Compile(); err != nil {
		return bad("constraints: %v", err)
	}
	props, known := argumentNames(c.InputSchema)
	if !known {
		return nil // no schema: its arguments are unknown
	}
	slices.Sort(props)
	takes := "it takes no arguments"
	if len(props) > 0 {
		takes = "it takes " + strings.Join(props, ", ")
	}
	for _, f := range []struct {
		field string
		names []string
	}{{"argValues", slices.Sorted(maps.Keys(c.Constraints.ArgValues))}, {"pathArgs", c.Constraints.PathArgs}, {"urlArgs", c.Constraints.URLArgs}} {
		for _, n := range f.names {
			if n != "" && n != "*" && !slices.Contains(props, n) {
				return bad("constraints: %s names the argument %q, which %s does not take (%s); name one of its arguments", f.field, n, name, takes)
			}
		}
	}
	if missed := inapplicable(c.Constraints, props); len(missed) > 0 {
		return bad("constraints: %s would restrict nothing: it checks %s, which %s does not take (%s); name the argument to check with %s",
			missed[0], constraintArgs(c.Constraints, missed[0]), name, takes, map[string]string{"pathGlobs": "pathArgs", "allowedDomains": "urlArgs"}[missed[0]])
	}
	return nil
}
