package testregistry

import (
	"os/exec"
	"strings"
	"sync"
	"testing"
)

var python struct {
	once sync.Once
	exe  string
	why  string
}

// Python returns the real executable of the python3 on PATH (what a shim
// such as pyenv's runs), which the tests that fetch with pip need to have
// pip; it skips tb when there is none.
func Python(tb testing.TB) string {
	tb.Helper()
	python.once.Do(func() {
		if _, err := exec.LookPath("python3"); err != nil {
			python.why = "python3 is not installed"
			return
		}
		out, err := exec.Command("python3", "-c", "import sys;print(sys.executable)").Output()
		if err != nil {
			python.why = "python3 does not run: " + err.Error()
			return
		}
		exe := strings.TrimSpace(string(out))
		if err := exec.Command(exe, "-m", "pip", "--version").Run(); err != nil {
			python.why = exe + " has no pip"
			return
		}
		python.exe = exe
	})
	if python.exe == "" {
		tb.Skip(python.why)
	}
	return python.exe
}
