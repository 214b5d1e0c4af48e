package main

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is skillgate's version as servers, agents and the OpenAPI
// document see it: the module version of a binary installed from a tagged
// module, else "devel-" and the commit it was built from (with
// "-modified" when the tree had uncommitted changes), else "devel". It is
// read once from the build's own information, never set.
var version = readBuild().String()

// buildInfo is what a binary knows of its own build (runtime/debug's
// BuildInfo, read by buildInfoOf).
type buildInfo struct {
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

// readBuild reads this binary's build information.
func readBuild() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildInfo{}
	}
	return buildInfoOf(bi)
}

// buildInfoOf extracts the version facts of bi: a tagged module version
// (not "(devel)", not a pseudo-version, which says less than the commit)
// and the VCS settings.
func buildInfoOf(bi *debug.BuildInfo) buildInfo {
	var b buildInfo
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

// String is the version in one word (see version).
func (b buildInfo) String() string {
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
func (b buildInfo) Text(goVersion string) string {
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

func (m *Main) versionCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print skillgate's version: the tagged module version, or the commit it was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := readBuild()
			goVersion := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
			if asJSON {
				v := struct {
					Version string `json:"version"`
					buildInfo
					Go     string `json:"go"`
					Module string `json:"module"`
				}{Version: b.String(), buildInfo: b, Go: goVersion}
				if bi, ok := debug.ReadBuildInfo(); ok {
					v.Module = bi.Main.Path
				}
				return writeJSON(m.Stdout, v)
			}
			_, err := fmt.Fprintln(m.Stdout, b.Text(goVersion))
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return c
}
