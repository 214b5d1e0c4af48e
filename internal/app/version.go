package app

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
)

// BuildInfo is what a binary knows of its own build (runtime/debug's
// BuildInfo, read by BuildInfoOf).
type BuildInfo struct {
	// Module is the main module's version when it was built as a
	// tagged module (go install …@v1.2.3), "" otherwise.
	Module string `json:"module_version,omitempty"`
	// Commit, Time and Modified are the VCS information of a build in a
	// clone (vcs.revision, vcs.time, vcs.modified).
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"commit_time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
}

// pseudoVersion matches the versions the go command makes up for a commit
// that no tag names (v0.0.0-20261128163322-2f098d5a1b2c, with +dirty).
var pseudoVersion = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+-(?:[0-9A-Za-z.]+\.)?(?:0\.)?[0-9]{14}-[0-9a-f]{12}(?:\+dirty)?$`)

// ReadBuild reads this binary's build information.
func ReadBuild() BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return BuildInfo{}
	}
	return buildInfoOf(bi)
}

// buildInfoOf extracts the version facts of bi: a tagged module version
// (not "(devel)", not a pseudo-version, which says less than the commit)
// and the VCS settings.
func buildInfoOf(bi *debug.BuildInfo) BuildInfo {
	var b BuildInfo
	if v := bi.Main.Version; v != "" && v != "(devel)" && !pseudoVersion.MatchString(v) {
		b.Module = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the version in one word: the tagged module version, else
// "devel-" and the commit (with "-modified"), else "devel".
func (b BuildInfo) String() string {
	switch {
	case b.Module != "":
		return b.Module
	case b.Commit == "":
		return "devel"
	}
	v := "devel-" + shortCommit(b.Commit)
	if b.Modified {
		v += "-modified"
	}
	return v
}

// Text is the version line 'skillgate version' prints.
func (b BuildInfo) Text(goVersion string) string {
	if b.Commit == "" {
		if b.Module == "" {
			return fmt.Sprintf("skillgate devel (%s; built without VCS information)", goVersion)
		}
		return fmt.Sprintf("skillgate %s (%s)", b, goVersion)
	}
	at := ""
	if b.Time != "" {
		at = " of " + b.Time
	}
	mod := ""
	if b.Modified {
		mod = ", with uncommitted changes"
	}
	return fmt.Sprintf("skillgate %s (commit %s%s%s; %s)", b, b.Commit, at, mod, goVersion)
}

// shortCommit is the first 12 characters of a commit hash, as the go
// command's pseudo-versions write it.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// VersionInfo is what 'skillgate version --json' prints: the version, the
// build's commit and time, the Go toolchain and platform, and the module.
type VersionInfo struct {
	Version string `json:"version"`
	BuildInfo
	Go     string `json:"go"`
	Module string `json:"module"`
}

// Version reads the running binary's version (see [ReadBuild]).
func Version() VersionInfo {
	b := ReadBuild()
	v := VersionInfo{Version: b.String(), BuildInfo: b, Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Module = bi.Main.Path
	}
	return v
}

// Text is the version as 'skillgate version' prints it.
func (v VersionInfo) Text() string { return v.BuildInfo.Text(v.Go) }
