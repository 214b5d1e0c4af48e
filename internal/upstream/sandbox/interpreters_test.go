package sandbox_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// fakeHome makes a user's home directory under the real /home (hidden by
// every sandbox), removed when the test ends, and skips where /home is
// not writable.
func fakeHome(t *testing.T) string {
	t.Helper()
	home, err := os.MkdirTemp("/home", "sgtest-")
	if err != nil {
		t.Skip("/home is not writable:", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	return home
}

// layout writes files (text, executable) and symbolic links (a value
// starting with "->") at absolute paths.
func layout(t *testing.T, files map[string]string) {
	t.Helper()
	for p, v := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(v, "->"); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(v), 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestInterpreters: what a program whose interpreter is installed under a
// hidden directory needs bound, and what is refused.
func TestInterpreters(t *testing.T) {
	home := fakeHome(t)
	data := t.TempDir() // skillgate's data directory
	tmp := t.TempDir()
	node := filepath.Join(home, ".nvm", "versions", "node", "v20")
	python := filepath.Join(home, ".pyenv", "versions", "3.11.7")
	layout(t, map[string]string{
		filepath.Join(node, "bin", "node"):                 "->/usr/bin/node",
		filepath.Join(python, "bin", "python3.11"):         "->/usr/bin/python3.11",
		filepath.Join(home, "node"):                        "->/usr/bin/node",
		filepath.Join(home, "proj", "server.js"):           "#!/usr/bin/env node\nconsole.log('ok')\n",
		filepath.Join(home, "proj", "direct.js"):           "#!" + home + "/node\nconsole.log('ok')\n",
		filepath.Join(home, "proj", "split.js"):            "#!/usr/bin/env -S NODE_OPTIONS=--no-warnings node --trace-exit\n",
		filepath.Join(home, ".local", "bin", "tool"):       "#!/bin/sh\necho tool\n",
		filepath.Join(tmp, "server.py"):                    "#! " + python + "/bin/python3.11 -u\nprint('ok')\n",
		filepath.Join(tmp, "bin", "node"):                  "->" + filepath.Join(node, "bin", "node"), // /usr/local/bin/node into ~/.nvm
		filepath.Join(tmp, "linked.js"):                    "#!/usr/bin/env node\n",
		filepath.Join(tmp, "system.sh"):                    "#!/usr/bin/env sh\necho ok\n",
		filepath.Join(tmp, "absent.sh"):                    "#!/usr/bin/env nope\n",
		filepath.Join(tmp, "in-data.py"):                   "#!" + data + "/pkgs/py/bin/python\n",
		filepath.Join(tmp, "data.sh"):                      "#!" + data + "/sh\n",
		filepath.Join(data, "pkgs", "py", "bin", "python"): "->/usr/bin/python3.11",
		filepath.Join(data, "sh"):                          "->/bin/sh",
		filepath.Join(tmp, "a"):                            "#!" + tmp + "/b\n",
		filepath.Join(tmp, "b"):                            "#!" + tmp + "/a\n",
		filepath.Join(tmp, "s0"):                           "#!" + tmp + "/s1\n",
		filepath.Join(tmp, "s1"):                           "#!" + tmp + "/s2\n",
		filepath.Join(tmp, "s2"):                           "#!" + tmp + "/s3\n",
		filepath.Join(tmp, "s3"):                           "#!" + tmp + "/s4\n",
		filepath.Join(tmp, "s4"):                           "#!" + tmp + "/s5\n",
		filepath.Join(tmp, "s5"):                           "#!/bin/sh\n",
	})
	dataWhat := "skillgate's data directory (its database, tokens.json, credentials.key)"
	ro := func(p, from string) capability.Grant {
		return capability.Grant{Path: p, Access: capability.GrantReadOnly, From: from}
	}
	nvmPath := []string{"PATH=" + filepath.Join(node, "bin") + ":/usr/bin:/bin"}
	tests := []struct {
		name    string
		program string
		env     []string
		want    []capability.Grant
		wantErr string
		wantIs  error
	}{
		{"#!/usr/bin/env node, node from nvm", filepath.Join(home, "proj", "server.js"), nvmPath, []capability.Grant{
			ro(filepath.Join(home, "proj"), "program"),
			ro(node, "interpreter of "+filepath.Join(home, "proj", "server.js")+" (#!/usr/bin/env node)"),
		}, "", nil},
		{"env's options and assignments skipped", filepath.Join(home, "proj", "split.js"), nvmPath, []capability.Grant{
			ro(filepath.Join(home, "proj"), "program"),
			ro(node, "interpreter of "+filepath.Join(home, "proj", "split.js")+" (#!/usr/bin/env -S NODE_OPTIONS=--no-warnings node --trace-exit)"),
		}, "", nil},
		{"python from pyenv, with an argument", filepath.Join(tmp, "server.py"), nil, []capability.Grant{
			ro(python, "interpreter of "+filepath.Join(tmp, "server.py")+" (#!"+python+"/bin/python3.11 -u)"),
		}, "", nil},
		{"the command itself from nvm", filepath.Join(node, "bin", "node"), nil, []capability.Grant{ro(node, "program")}, "", nil},
		{"a program in ~/.local/bin", filepath.Join(home, ".local", "bin", "tool"), nil, []capability.Grant{ro(filepath.Join(home, ".local"), "program")}, "", nil},
		{"a link outside into nvm", filepath.Join(tmp, "linked.js"), []string{"PATH=" + filepath.Join(tmp, "bin")}, []capability.Grant{
			ro(node, "interpreter of "+filepath.Join(tmp, "linked.js")+" (#!/usr/bin/env node)"),
		}, "", nil},
		{"a system interpreter needs nothing", filepath.Join(tmp, "system.sh"), []string{"PATH=/usr/bin:/bin"}, nil, "", nil},
		{"a binary needs nothing", "/usr/bin/env", nil, nil, "", nil},

		{"an interpreter in a home directory as a whole", filepath.Join(home, "proj", "direct.js"), nil, nil,
			"sandbox: the interpreter " + home + "/node of " + home + "/proj/direct.js is installed in " + home +
				", a home directory, which a confined server never sees as a whole: install it in a directory of its own (such as /opt/node or ~/.local/node) or under /usr/local, then declare that path",
			sandbox.ErrHiddenInterpreter},
		{"node found on PATH in a home directory", filepath.Join(tmp, "linked.js"), []string{"PATH=" + home}, nil,
			"sandbox: the interpreter " + home + "/node of " + tmp + "/linked.js is installed in " + home +
				", a home directory, which a confined server never sees as a whole: install it in a directory of its own (such as /opt/node or ~/.local/node) or under /usr/local, then declare that path",
			sandbox.ErrHiddenInterpreter},
		{"an interpreter in the data directory", filepath.Join(tmp, "in-data.py"), nil, nil,
			"sandbox: the interpreter " + data + "/pkgs/py/bin/python of " + tmp + "/in-data.py is installed in " + data + "/pkgs/py, which lies in " + data + ", " + dataWhat +
				": install it in a directory of its own (such as /opt/python or ~/.local/python) or under /usr/local, then declare that path",
			sandbox.ErrHiddenInterpreter},
		{"an interpreter directly in the data directory", filepath.Join(tmp, "data.sh"), nil, nil,
			"sandbox: the interpreter " + data + "/sh of " + tmp + "/data.sh is installed in " + data + ", " + dataWhat +
				", which a confined server never sees: install it in a directory of its own (such as /opt/sh or ~/.local/sh) or under /usr/local, then declare that path",
			sandbox.ErrHiddenInterpreter},
		{"a program in a home directory as a whole", filepath.Join(home, "node"), nil, nil,
			"sandbox: the program " + home + "/node is installed in " + home +
				", a home directory, which a confined server never sees as a whole: install it in a directory of its own (such as /opt/node or ~/.local/node) or under /usr/local, then declare that path",
			sandbox.ErrHiddenInterpreter},
		{"a loop", filepath.Join(tmp, "a"), nil, nil,
			"sandbox: the #! lines of " + tmp + "/a form a loop (" + tmp + "/a -> " + tmp + "/b -> " + tmp + "/a): the kernel would refuse to run it", nil},
		{"too deep", filepath.Join(tmp, "s0"), nil, nil,
			"sandbox: the #! lines of " + tmp + "/s0 nest more than 4 deep (" + tmp + "/s0 -> " + tmp + "/s1 -> " + tmp + "/s2 -> " + tmp + "/s3 -> " + tmp + "/s4 -> " + tmp + "/s5): the kernel would refuse to run it", nil},
		{"an interpreter not on PATH", filepath.Join(tmp, "absent.sh"), []string{"PATH=/nonexistent"}, nil,
			"sandbox: the interpreter nope of " + tmp + "/absent.sh (#!/usr/bin/env nope) is not on PATH (/nonexistent)", nil},
		{"a program that cannot be read", filepath.Join(tmp, "missing"), nil, nil,
			"sandbox: the program " + tmp + "/missing cannot be read: no such file or directory", os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sandbox.Interpreters(tt.program, tt.env, []string{data}, nil)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || (tt.wantIs != nil && !errors.Is(err, tt.wantIs)) {
					t.Fatalf("Interpreters = %+v, %v\nwant error %s", got, err, tt.wantErr)
				}
				if tt.wantIs != sandbox.ErrHiddenInterpreter && errors.Is(err, sandbox.ErrHiddenInterpreter) {
					t.Fatalf("%v is ErrHiddenInterpreter", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Interpreters =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

// TestBubblewrapBindsInterpreter runs, in real sandboxes, a script from a
// home directory whose `#!/usr/bin/env node` finds node installed by nvm
// in that home directory: both are bound back read-only and it runs (also
// under the helper's Landlock ruleset). One whose interpreter is the home
// directory's own file is refused before anything starts.
func TestBubblewrapBindsInterpreter(t *testing.T) {
	requireBwrap(t)
	if _, err := os.Stat("/usr/bin/node"); err != nil {
		t.Skip("node is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := fakeHome(t)
	node := filepath.Join(home, ".nvm", "versions", "node", "v20")
	server := filepath.Join(home, "proj", "server.js")
	direct := filepath.Join(home, "proj", "direct.js")
	layout(t, map[string]string{
		filepath.Join(node, "bin", "node"): "->/usr/bin/node",
		filepath.Join(home, "node"):        "->/usr/bin/node",
		server:                             "#!/usr/bin/env node\nconsole.log('ok')\n",
		direct:                             "#!" + home + "/node\nconsole.log('ok')\n",
	})
	// Only nvm's node on PATH: inside the sandbox, env finds no other.
	env := []string{"PATH=" + filepath.Join(node, "bin")}
	for _, tt := range []struct {
		name string
		b    sandbox.Bubblewrap
	}{
		{"bwrap", sandbox.Bubblewrap{}},
		{"bwrap and the helper", sandbox.Bubblewrap{Helper: []string{self, sandbox.HelperCommand}, Limits: sandbox.Limits{AddressSpace: -1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(server)
			cmd.Env = env
			if err := tt.b.Confine(cmd); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %v\n%s", cmd.Args, err, out.String())
			}
			if out.String() != "ok\n" {
				t.Errorf("output %q, want %q", out.String(), "ok\n")
			}

			// nvm's installation and the script's directory are bound
			// read-only at their own paths, and the helper's Landlock
			// ruleset lets the server read them.
			cmd = exec.Command(server)
			cmd.Env = env
			if err := tt.b.Confine(cmd); err != nil {
				t.Fatal(err)
			}
			opts := strings.Join(bwrapOptions(t, cmd), "\x00")
			for _, dir := range []string{node, filepath.Dir(server)} {
				if !strings.Contains(opts, strings.Join([]string{"--ro-bind", dir, dir}, "\x00")) {
					t.Errorf("options %q do not bind %s", opts, dir)
				}
				if i := strings.Index(opts, sandbox.PolicyEnv+"\x00"); len(tt.b.Helper) > 0 && (i < 0 || !strings.Contains(opts[i:], `"`+dir+`"`)) {
					t.Errorf("the helper's policy does not let the server read %s: %q", dir, opts)
				}
			}
		})
	}

	cmd := exec.Command(direct)
	cmd.Env = env
	err = sandbox.Bubblewrap{}.Confine(cmd)
	want := "sandbox: the interpreter " + home + "/node of " + direct + " is installed in " + home +
		", a home directory, which a confined server never sees as a whole: install it in a directory of its own (such as /opt/node or ~/.local/node) or under /usr/local, then declare that path"
	if !errors.Is(err, sandbox.ErrHiddenInterpreter) || err.Error() != want {
		t.Fatalf("Confine = %v\nwant %s", err, want)
	}
	if cmd.Path != direct || len(cmd.ExtraFiles) != 0 {
		t.Fatalf("a refused command was rewritten: %q", cmd.Args)
	}
}

// TestBubblewrapBinds: a directory in a hidden one (a package tree in the
// data directory) is readable by a confined server when skillgate binds
// it, with or without the helper, and not otherwise; a bind that does not
// exist, or would uncover a hidden path, is refused.
func TestBubblewrapBinds(t *testing.T) {
	requireBwrap(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	tree := filepath.Join(data, "packages", "pkg")
	link := filepath.Join(t.TempDir(), "pkg-link")
	layout(t, map[string]string{
		filepath.Join(tree, "lib.txt"): "the package\n",
		filepath.Join(data, "secret"):  "secret\n",
		link:                           "->" + tree,
	})
	read := `cat "$1/lib.txt" 2>/dev/null || echo "not visible"; cat "$2" 2>/dev/null || echo "secret hidden"`
	helper := []string{self, sandbox.HelperCommand}
	tests := []struct {
		name string
		b    sandbox.Bubblewrap
		path string
		want string
	}{
		{"bound", sandbox.Bubblewrap{Hide: []string{data}, Binds: []string{tree}}, tree, "the package\nsecret hidden\n"},
		{"bound, under the helper", sandbox.Bubblewrap{Hide: []string{data}, Binds: []string{tree}, Helper: helper}, tree, "the package\nsecret hidden\n"},
		{"bound through a link", sandbox.Bubblewrap{Hide: []string{data}, Binds: []string{link}, Helper: helper}, link, "the package\nsecret hidden\n"},
		{"not bound", sandbox.Bubblewrap{Hide: []string{data}}, tree, "not visible\nsecret hidden\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("/bin/sh", "-c", read, "sh", tt.path, filepath.Join(data, "secret"))
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			// The secret's path is an argument: Grants would refuse it.
			tt.b.Grants = []capability.Grant{}
			if err := tt.b.Confine(cmd); err != nil {
				t.Fatal(err)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if string(out) != tt.want {
				t.Errorf("\n got %q\nwant %q", out, tt.want)
			}
		})
	}

	// The bind is named with its links resolved as the source, at its own
	// path; the helper may read it.
	cmd := exec.Command("/bin/true")
	b := sandbox.Bubblewrap{Hide: []string{data}, Binds: []string{link}, Helper: helper}
	if err := b.Confine(cmd); err != nil {
		t.Fatal(err)
	}
	opts := strings.Join(bwrapOptions(t, cmd), "\x00")
	if !strings.Contains(opts, strings.Join([]string{"--ro-bind", tree, link}, "\x00")) {
		t.Errorf("options %q do not bind %s at %s", opts, tree, link)
	}
	if i := strings.Index(opts, sandbox.PolicyEnv+"\x00"); i < 0 || !strings.Contains(opts[i:], `"`+link+`"`) {
		t.Errorf("the helper's policy does not let the server read %s: %q", link, opts)
	}

	dataWhat := "skillgate's data directory (its database, tokens.json, credentials.key)"
	for _, tt := range []struct{ bind, want string }{
		{filepath.Join(data, "missing"), "sandbox: the bind " + data + "/missing does not exist"},
		{"packages/pkg", `sandbox: the bind "packages/pkg" is not an absolute path`},
		{data, "sandbox: the bind " + data + " would uncover " + data + ", " + dataWhat},
		{filepath.Dir(data), "sandbox: the bind " + filepath.Dir(data) + " would uncover " + data + ", " + dataWhat},
		{"/home", "sandbox: the bind /home would uncover /home, the users' home directories"},
	} {
		cmd := exec.Command("/bin/true")
		err := sandbox.Bubblewrap{Hide: []string{data}, Binds: []string{tt.bind}}.Confine(cmd)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Confine with bind %s = %v\nwant %s", tt.bind, err, tt.want)
		}
	}

	// The runtime passes a server's binds on.
	r := &sandbox.Runtime{StateRoot: filepath.Join(data, "sandbox"), Hide: []string{data}, Helper: helper, LookPath: found}
	got, err := r.Confiner(sandbox.Server{Skill: "acme/x", Version: "sha256:1", Binds: []string{tree}})
	if err != nil || !slices.Equal(got.Binds, []string{tree}) {
		t.Fatalf("Confiner = %+v, %v", got, err)
	}
}
