package skillsext

// The extension's methods that skillgate answers itself (resources/read goes
// through the SDK).
const (
	MethodList    = "skills/list"
	MethodGet     = "skills/get"
	MethodReadDir = "resources/directory/read"
)

// IsMethod reports whether method is one [Server.Handle] answers.
func IsMethod(method string) bool {
	return method == MethodList || method == MethodGet || method == MethodReadDir
}
