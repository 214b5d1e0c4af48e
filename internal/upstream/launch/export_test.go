package launch

// Internals the external tests (package launch_test) reach.
var (
	// ConsoleScripts is consoleScripts, the parser of entry_points.txt.
	ConsoleScripts = consoleScripts
	// PythonEntry is pythonEntry, which picks the console script to run.
	PythonEntry = pythonEntry
	// PickScript is pickScript, which picks of the console scripts.
	PickScript = pickScript
	// EntryPointPattern is what a "module:function" entry point matches.
	EntryPointPattern = entryPointPattern
	// NPMLockPins is npmLockPins, the reader of package-lock.json.
	NPMLockPins = npmLockPins
	// NPMBin is npmBin, which picks the program of an installed package.
	NPMBin = npmBin
)
