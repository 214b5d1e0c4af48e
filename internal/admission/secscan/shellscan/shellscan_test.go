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
			found, err := Analyze([]byte(tc.src), "t.sh")
			if err != nil {
				t.Fatalf("Analyze: %v", err)
			}
			got := make([]string, 0, len(found))
			for _, f := range found {
				got = append(got, f.String())
			}
			if !slices.Equal(got, tc.want) && len(got)+len(tc.want) > 0 {
				t.Errorf("findings\n got: %q\nwant: %q", got, tc.want)
			}
		})
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
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		found, err := Analyze(src, "fuzz.sh")
		if err != nil {
			if !errors.Is(err, ErrParse) {
				t.Fatalf("error is not ErrParse: %v", err)
			}
			return
		}
		lines := strings.Count(string(src), "\n") + 1
		for _, fd := range found {
			if fd.DownloadLine < 1 || fd.RunLine > lines || fd.DownloadLine > fd.RunLine {
				t.Fatalf("finding %v outside the script's %d lines", fd, lines)
			}
		}
	})
}
