package sandbox_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// TestGrants: what a declaration's absolute paths grant a confined server,
// and the paths refused because they are, hold or lie in a hidden one.
func TestGrants(t *testing.T) {
	app := t.TempDir()
	data := filepath.Join(app, ".skillgate") // the data directory inside a project
	tree := filepath.Join(data, "imported", "d", "skill")
	os.MkdirAll(filepath.Join(tree, "sub"), 0o755)
	work := t.TempDir()
	allowed := filepath.Join(work, "allowed")
	os.MkdirAll(allowed, 0o755)
	os.WriteFile(filepath.Join(work, "script.js"), []byte("x"), 0o644)
	nm := filepath.Join(work, "node_modules", "pkg")
	os.MkdirAll(nm, 0o755)
	toData, toApp := filepath.Join(work, "to-data"), filepath.Join(work, "to-app")
	os.Symlink(data, toData)
	os.Symlink(app, toApp)
	dataWhat := "skillgate's data directory (its database, tokens.json, credentials.key)"
	ro := func(p, from string) capability.Grant {
		return capability.Grant{Path: p, Access: capability.GrantReadOnly, From: from}
	}
	rw := func(p, from string) capability.Grant {
		return capability.Grant{Path: p, Access: capability.GrantReadWrite, From: from}
	}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    []capability.Grant
		wantErr string
	}{
		{"a directory argument", []string{"index.js", allowed}, nil, []capability.Grant{rw(allowed, "args[1]")}, ""},
		{"a file argument, read-only", []string{filepath.Join(work, "script.js")}, nil, []capability.Grant{ro(filepath.Join(work, "script.js"), "args[0]")}, ""},
		{"an environment file: its directory", nil, map[string]string{"MEMORY_FILE_PATH": filepath.Join(allowed, "memory.jsonl")}, []capability.Grant{rw(allowed, "env MEMORY_FILE_PATH")}, ""},
		{"an environment file that exists", nil, map[string]string{"F": filepath.Join(work, "script.js")}, []capability.Grant{rw(work, "env F")}, ""},
		{"a credential reference", nil, map[string]string{"TOKEN": "${TOKEN}"}, nil, ""},
		{"relative", []string{"allowed", "./x"}, nil, nil, ""},
		{"the root", []string{"/"}, nil, nil, ""},
		{"system directories, read-only", []string{"/usr/share", "/var/tmp"}, map[string]string{"P": "/etc/passwd"},
			[]capability.Grant{ro("/usr/share", "args[0]"), ro("/var/tmp", "args[1]")}, ""},
		{"the skill's tree, read-only", []string{filepath.Join(tree, "sub")}, nil, []capability.Grant{ro(filepath.Join(tree, "sub"), "args[0]")}, ""},
		{"node_modules, read-only", []string{nm}, nil,
			[]capability.Grant{ro(filepath.Join(work, "node_modules"), "args[0] (its node_modules tree)"), ro(nm, "args[0]")}, ""},
		{"missing", []string{filepath.Join(work, "missing")}, map[string]string{"F": filepath.Join(work, "missing", "f")}, nil, ""},
		{"once, read-write wins", []string{allowed, allowed}, map[string]string{"F": filepath.Join(allowed, "f")}, []capability.Grant{rw(allowed, "args[0]")}, ""},

		{"an argument holding the data directory", []string{app}, nil, nil,
			"args[0] " + app + " holds " + data + ", " + dataWhat + ": name a directory that does not hold it (a subdirectory of " + app + " beside it, or keep skillgate's data directory elsewhere with --data)"},
		{"an environment value holding the data directory", nil, map[string]string{"ROOT": app}, nil,
			"env ROOT " + app + " holds " + data + ", " + dataWhat + ": name a directory that does not hold it (a subdirectory of " + app + " beside it, or keep skillgate's data directory elsewhere with --data)"},
		{"a file in the directory that holds the data directory", nil, map[string]string{"F": filepath.Join(app, "notes.txt")}, nil,
			"env F " + app + " holds " + data + ", " + dataWhat + ": name a directory that does not hold it (a subdirectory of " + app + " beside it, or keep skillgate's data directory elsewhere with --data)"},
		{"the data directory", []string{data}, nil, nil, "args[0] " + data + " is " + data + ", " + dataWhat + ": name a directory outside it"},
		{"in the data directory", []string{filepath.Join(data, "imported")}, nil, nil,
			"args[0] " + filepath.Join(data, "imported") + " lies in " + data + ", " + dataWhat + ": name a directory outside it"},
		{"a link to the data directory", []string{toData}, nil, nil, "args[0] " + toData + " is " + data + ", " + dataWhat + ": name a directory outside it"},
		{"a link to the directory that holds it", nil, map[string]string{"D": toApp}, nil,
			"env D " + toApp + " holds " + data + ", " + dataWhat + ": name a directory that does not hold it (a subdirectory of " + app + " beside it, or keep skillgate's data directory elsewhere with --data)"},
		{"/etc holds the password hashes", []string{"/etc"}, nil, nil,
			"args[0] /etc holds /etc/shadow, the system's password hashes: name a directory that does not hold it (a subdirectory of /etc beside it)"},
		{"home directories", []string{"/root", "/home"}, nil, nil,
			"args[0] /root is /root, root's home directory: name a directory outside it; args[1] /home is /home, the users' home directories: name a directory outside it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sandbox.Grants(sandbox.Declaration{Args: tt.args, Env: tt.env, Dir: tree}, []string{data})
			if tt.wantErr != "" {
				want := sandbox.ErrHiddenGrant.Error() + ": " + tt.wantErr
				if err == nil || err.Error() != want || !errors.Is(err, sandbox.ErrHiddenGrant) {
					t.Fatalf("Grants = %v, %v\nwant error %s", got, err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Grants = %+v\nwant %+v", got, tt.want)
			}
		})
	}

	// The run-time sandbox computes the same grants, and refuses the same.
	r := &sandbox.Runtime{StateRoot: filepath.Join(data, "sandbox"), Hide: []string{data}, Helper: []string{"/bin/skillgate"}, LookPath: found}
	b, err := r.Confiner(sandbox.Server{Skill: "acme/x", Version: "sha256:1", Dir: tree, Args: []string{allowed}})
	if err != nil || !reflect.DeepEqual(b.Grants, []capability.Grant{rw(allowed, "args[0]")}) {
		t.Fatalf("Confiner = %+v, %v", b, err)
	}
	_, err = r.Confiner(sandbox.Server{Skill: "acme/x", Version: "sha256:1", Dir: tree, Env: map[string]string{"ROOT": app}})
	if !errors.Is(err, sandbox.ErrHiddenGrant) || !strings.HasSuffix(err.Error(), "(server of acme/x)") {
		t.Fatalf("Confiner of a grant holding the data directory: %v", err)
	}
}

// TestGrantsNeverExposeHidden is a property test over generated layouts:
// seeded random trees of directories, files and symbolic links (to
// directories, files, and links), one or two of whose directories are
// hidden, and declarations naming random paths of them. Whatever the
// layout, a grant Grants returns never is, holds or lies in a hidden path
// (compared with every link resolved, by an oracle of its own), and a
// declaration naming such a path is refused.
func TestGrantsNeverExposeHidden(t *testing.T) {
	for seed := range int64(300) {
		rng := rand.New(rand.NewPCG(uint64(seed), 28))
		root := t.TempDir()
		nodes := []string{root}
		var dirs []string
		for range 4 + rng.IntN(10) {
			parent := nodes[rng.IntN(len(nodes))]
			if st, err := os.Stat(parent); err != nil || !st.IsDir() {
				continue
			}
			p := filepath.Join(parent, fmt.Sprintf("n%d", len(nodes)))
			switch rng.IntN(4) {
			case 0, 1:
				os.Mkdir(p, 0o755)
				dirs = append(dirs, p)
			case 2:
				os.WriteFile(p, []byte("x"), 0o644)
			case 3:
				os.Symlink(nodes[rng.IntN(len(nodes))], p)
			}
			nodes = append(nodes, p)
		}
		if len(dirs) == 0 {
			continue
		}
		var hide []string
		for range 1 + rng.IntN(2) {
			hide = append(hide, dirs[rng.IntN(len(dirs))])
		}
		pick := func() string {
			p := nodes[rng.IntN(len(nodes))]
			if rng.IntN(4) == 0 {
				p = filepath.Join(p, "absent")
			}
			return p
		}
		d := sandbox.Declaration{Env: map[string]string{}}
		for range rng.IntN(4) {
			d.Args = append(d.Args, pick())
		}
		for i := range rng.IntN(3) {
			d.Env[fmt.Sprintf("V%d", i)] = pick()
		}
		got, err := sandbox.Grants(d, hide)

		// The oracle: every form of every hidden path, and whether a path
		// (as named and resolved) meets one.
		var hidden []string
		for _, h := range hide {
			hidden = append(hidden, h)
			if r, err := filepath.EvalSymlinks(h); err == nil {
				hidden = append(hidden, r)
			}
		}
		meets := func(p string) bool {
			forms := []string{p}
			if r, err := filepath.EvalSymlinks(p); err == nil {
				forms = append(forms, r)
			}
			for _, f := range forms {
				for _, h := range hidden {
					if f == h || strings.HasPrefix(f+"/", h+"/") || strings.HasPrefix(h+"/", f+"/") {
						return true
					}
				}
			}
			return false
		}
		var mustRefuse []string
		for _, a := range d.Args {
			if _, err := os.Stat(a); err == nil && meets(a) {
				mustRefuse = append(mustRefuse, a)
			}
		}
		for _, v := range d.Env {
			p := v
			if st, err := os.Stat(p); err != nil || !st.IsDir() {
				p = filepath.Dir(p)
			}
			if st, err := os.Stat(p); err == nil && st.IsDir() && meets(p) {
				mustRefuse = append(mustRefuse, v)
			}
		}
		layout := fmt.Sprintf("seed %d: hide %q, args %q, env %q", seed, hide, d.Args, d.Env)
		if len(mustRefuse) > 0 {
			if !errors.Is(err, sandbox.ErrHiddenGrant) {
				t.Fatalf("%s: Grants = %+v, %v; want refused (%q)", layout, got, err, mustRefuse)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", layout, err)
		}
		for _, g := range got {
			if meets(g.Path) {
				t.Fatalf("%s: grant %+v exposes a hidden path", layout, g)
			}
		}
	}
}
