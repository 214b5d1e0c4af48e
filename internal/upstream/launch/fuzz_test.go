package launch_test

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/upstream/launch"
)

// FuzzParse feeds Parse arbitrary declarations: command, and args joined
// with NUL (empty for none). Whatever the input, Parse must not panic, must
// leave its args alone, must refuse only with ErrUnsupported and a bounded,
// printable message, and what it accepts must be a registry package whose
// spec reads back the same.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, command, joined string) {
		var args []string
		if joined != "" {
			args = strings.Split(joined, "\x00")
		}
		before := append([]string(nil), args...)
		l, ok, err := launch.Parse(command, args)
		if !reflect.DeepEqual(args, before) {
			t.Fatalf("Parse changed its args: %q", args)
		}
		if err != nil {
			checkRefusal(t, l, ok, err)
			return
		}
		if !ok {
			if !reflect.DeepEqual(l, launch.Launch{}) {
				t.Fatalf("not a launcher, yet Launch %+v", l)
			}
			return
		}
		checkLaunch(t, l, args)
	})
}

func checkRefusal(t *testing.T, l launch.Launch, ok bool, err error) {
	t.Helper()
	msg := err.Error()
	switch {
	case !errors.Is(err, launch.ErrUnsupported):
		t.Fatalf("error %q does not wrap ErrUnsupported", msg)
	case !ok:
		t.Fatalf("error %q with ok false", msg)
	case !reflect.DeepEqual(l, launch.Launch{}):
		t.Fatalf("error %q with Launch %+v", msg, l)
	case !strings.HasPrefix(msg, "launch: "):
		t.Fatalf("error %q does not start with launch: ", msg)
	case len(msg) > 1024:
		t.Fatalf("error of %d bytes", len(msg))
	case !utf8.ValidString(msg):
		t.Fatalf("error %q is not UTF-8", msg)
	}
	for _, r := range msg {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u202e' || r == '\u2066' {
			t.Fatalf("error %q carries control character %U", msg, r)
		}
	}
}

func checkLaunch(t *testing.T, l launch.Launch, args []string) {
	t.Helper()
	if l.Package == "" {
		t.Fatalf("Launch %+v without a package", l)
	}
	spec := l.Spec()
	if !strings.Contains(spec, l.Package) {
		t.Fatalf("Spec %q does not contain package %q", spec, l.Package)
	}
	if strings.HasPrefix(spec, "-") || strings.HasPrefix(l.Bin, "-") {
		t.Fatalf("Launch %+v would read as an option", l)
	}
	if strings.ContainsAny(l.Package+l.Requested+l.Bin, "/\\:\x00\n") && !strings.HasPrefix(l.Package, "@") {
		t.Fatalf("Launch %+v names a path or URL", l)
	}
	if len(l.Args) > len(args) {
		t.Fatalf("Launch %+v has more args than the declaration", l)
	}
	var reread launch.Launch
	var ok bool
	var err error
	switch l.Ecosystem {
	case launch.NPM:
		if l.Launcher != launch.LauncherNPX && l.Launcher != launch.LauncherNPMExec {
			t.Fatalf("npm launch by %q", l.Launcher)
		}
		if l.Launcher == launch.LauncherNPX && !reflect.DeepEqual(l.Args, tail(args, len(l.Args))) {
			t.Fatalf("Args %q are not the declaration's last", l.Args)
		}
		reread, ok, err = launch.Parse("npx", []string{"--", spec})
	case launch.PyPI:
		if l.Launcher != launch.LauncherUVX && l.Launcher != launch.LauncherUVTool && l.Launcher != launch.LauncherPipx {
			t.Fatalf("PyPI launch by %q", l.Launcher)
		}
		if !reflect.DeepEqual(l.Args, tail(args, len(l.Args))) {
			t.Fatalf("Args %q are not the declaration's last", l.Args)
		}
		reread, ok, err = launch.Parse("pipx", []string{"run", spec})
	default:
		t.Fatalf("Launch %+v of ecosystem %q", l, l.Ecosystem)
	}
	if !ok || err != nil || reread.Package != l.Package || reread.Requested != l.Requested {
		t.Fatalf("Spec %q of %+v reads back as %+v, %v, %v", spec, l, reread, ok, err)
	}
}

// tail is the last n of args, nil for none.
func tail(args []string, n int) []string {
	if n == 0 {
		return nil
	}
	return args[len(args)-n:]
}

// FuzzConsoleScripts feeds the parser of entry_points.txt arbitrary bytes.
// It must not panic; every script it returns has a trimmed name without
// "=" that is no comment, and a value cut before any space or "["; and
// pickScript, which chooses among them as pythonEntry does, returns a
// value only when it is module:function, and always the valid one it is
// asked for by name. Its refusals are bounded and printable.
func FuzzConsoleScripts(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		scripts := launch.ConsoleScripts(data)
		if scripts == nil {
			t.Fatal("nil map")
		}
		for k, v := range scripts {
			switch {
			case k != strings.TrimSpace(k):
				t.Fatalf("name %q is not trimmed", k)
			case strings.Contains(k, "="):
				t.Fatalf("name %q holds =", k)
			case strings.HasPrefix(k, "#"):
				t.Fatalf("name %q is a comment", k)
			case strings.ContainsAny(v, " ["):
				t.Fatalf("value %q of %q holds a space or [", v, k)
			case v != strings.TrimLeftFunc(v, unicode.IsSpace):
				t.Fatalf("value %q of %q is not trimmed", v, k)
			}
		}
		l := launch.Launch{Launcher: launch.LauncherUVX, Ecosystem: launch.PyPI, Package: "echo-mcp"}
		ep, err := launch.PickScript(scripts, l)
		if err == nil && !launch.EntryPointPattern.MatchString(ep) {
			t.Fatalf("pickScript picked %q, not module:function", ep)
		}
		if err == nil && !slices.Contains(slices.Collect(maps.Values(scripts)), ep) {
			t.Fatalf("pickScript picked %q, none of %q", ep, scripts)
		}
		checkMessage(t, err)
		for k, v := range scripts {
			if k == "" {
				continue
			}
			l.Bin = k
			ep, err := launch.PickScript(scripts, l)
			valid := launch.EntryPointPattern.MatchString(v)
			switch {
			case valid && (err != nil || ep != v):
				t.Fatalf("script %q = %q: pickScript = %q, %v", k, v, ep, err)
			case !valid && err == nil:
				t.Fatalf("script %q = %q accepted as %q", k, v, ep)
			}
			checkMessage(t, err)
		}
	})
}

// checkMessage fails t when err, an error about a package's metadata, is
// unbounded or carries a control character.
func checkMessage(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if len(msg) > 4096 {
		t.Fatalf("error of %d bytes", len(msg))
	}
	for _, r := range msg {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u202e' || r == '\u2066' {
			t.Fatalf("error %q carries control character %U", msg, r)
		}
	}
}

// FuzzNPMLock feeds the reader of package-lock.json arbitrary bytes and
// package names. It must not panic; it refuses only with ErrFetch or
// ErrUnsupported; and what it accepts has an integrity, and dependencies
// sorted by name and version, each once, each with an integrity.
func FuzzNPMLock(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, pkg string) {
		l := launch.Launch{Launcher: launch.LauncherNPX, Ecosystem: launch.NPM, Package: pkg}
		p, scripts, err := launch.NPMLockPins(data, "srv", l, "http://127.0.0.1:1/")
		if err != nil {
			msg := err.Error()
			switch {
			case errors.Is(err, launch.ErrFetch):
				if !strings.HasPrefix(msg, "package fetch failed: server srv: ") {
					t.Fatalf("error %q", msg)
				}
			case errors.Is(err, launch.ErrUnsupported):
				if !strings.HasPrefix(msg, "launch cannot be pinned: server srv: ") {
					t.Fatalf("error %q", msg)
				}
			default:
				t.Fatalf("error %q wraps neither ErrFetch nor ErrUnsupported", msg)
			}
			if !reflect.DeepEqual(p, launch.Package{}) || scripts != nil {
				t.Fatalf("error %q with %+v, %+v", msg, p, scripts)
			}
			return
		}
		if p.Integrity == "" {
			t.Fatalf("accepted %s without an integrity", pkg)
		}
		if p.Registry != "http://127.0.0.1:1/" {
			t.Fatalf("registry %q", p.Registry)
		}
		for i, d := range p.Dependencies {
			if d.Integrity == "" {
				t.Fatalf("dependency %+v without an integrity", d)
			}
			if i > 0 {
				prev := p.Dependencies[i-1]
				if prev.Name > d.Name || prev.Name == d.Name && prev.Version >= d.Version {
					t.Fatalf("dependencies out of order or twice: %+v then %+v", prev, d)
				}
			}
		}
		var lock struct {
			Packages map[string]json.RawMessage `json:"packages"`
		}
		if err := json.Unmarshal(data, &lock); err != nil {
			t.Fatalf("accepted a lock that is not JSON: %v", err)
		}
		if _, ok := lock.Packages["node_modules/"+pkg]; !ok {
			t.Fatalf("accepted a lock without node_modules/%s", pkg)
		}
		if len(p.Dependencies) >= len(lock.Packages) || len(scripts) > len(lock.Packages) {
			t.Fatalf("%d dependencies and %d scripts of %d packages", len(p.Dependencies), len(scripts), len(lock.Packages))
		}
	})
}
