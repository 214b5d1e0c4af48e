package jsonout_test

import (
	"os"

	"github.com/skillgate/skillgate/internal/platform/jsonout"
)

func ExampleWrite() {
	_ = jsonout.Write(os.Stdout, map[string]any{"name": "pdf", "when": "a <b> & c"})
	// Output:
	// {
	//   "name": "pdf",
	//   "when": "a <b> & c"
	// }
}
