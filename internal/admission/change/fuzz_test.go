package change_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/change"
)

// FuzzParseSmokeCall: an operator's --smoke-call never panics the parser;
// what it accepts names an executor and holds a JSON object within
// MaxSmokeArgs.
func FuzzParseSmokeCall(f *testing.F) {
	for _, s := range []string{`find_repositories={"query":"skillgate"}`, `find_issues={}`, `=`, `x=null`, `x=[1]`, `x={"a":` + strings.Repeat("[", 100), "read_file_contents={\"path\":\"\\u0000\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		call, err := change.ParseSmokeCall(s)
		if err != nil {
			return
		}
		var obj map[string]json.RawMessage
		if call.Executor == "" || len(call.Arguments) > change.MaxSmokeArgs || json.Unmarshal(call.Arguments, &obj) != nil || obj == nil {
			t.Fatalf("accepted %q as %+v", s, call)
		}
	})
}
