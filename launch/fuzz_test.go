package launch_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillgate/skillgate/launch"
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
