package secscan

import (
	"slices"
	"testing"
)

// TestCodeRulesByRole: a file is read as Python or JavaScript by how it
// runs, else by its name; each finding is at the sink and names its source.
func TestCodeRulesByRole(t *testing.T) {
	const dropper = "import base64, os\nc = base64.b64decode(B).decode()\nos.system(c)\n"
	const jsDropper = "const cp = require('child_process');\ncp.exec(atob(B));\n"
	cases := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"a .dat that mcp.json runs with python3",
			map[string]string{"mcp.json": `{"mcpServers": {"s": {"command": "python3", "args": ["data/r.dat"]}}}`, "data/r.dat": dropper},
			[]string{"SG520 critical data/r.dat:3:1"}},
		{"the same .dat nothing runs is data",
			map[string]string{"data/r.dat": dropper},
			nil},
		{"a .txt whose #! line names node",
			map[string]string{"tool.txt": "#!/usr/bin/env node\n" + jsDropper},
			[]string{"SG520 critical tool.txt:3:1"}},
		{"a .py that a shell runs is not read as Python",
			map[string]string{"mcp.json": `{"mcpServers": {"s": {"command": "sh", "args": ["x.py"]}}}`, "x.py": dropper},
			nil},
		{"a .mjs by its name",
			map[string]string{"scripts/a.mjs": "import { execSync } from 'node:child_process';\nconst t = await (await fetch(U)).text();\nexecSync(t);\n"},
			[]string{"SG521 critical scripts/a.mjs:3:1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := scanTree(t, tc.files)
			var got []string
			for _, f := range rep.Findings {
				if RuleByID(f.Rule).parsed && f.Rule >= "SG520" && f.Rule <= "SG539" {
					got = append(got, f.Rule+" "+string(f.Severity)+" "+f.Location())
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("findings %q; want %q\n%+v", got, tc.want, rep.Findings)
			}
		})
	}
}

func TestCodeFindingMessage(t *testing.T) {
	got := File("scripts/check.py", []byte("import requests, subprocess\n\nscript = requests.get(URL).text\nsubprocess.run(['bash', '-c', script])\n"))
	i := slices.IndexFunc(got, func(f Finding) bool { return f.Rule == "SG521" })
	if i < 0 {
		t.Fatalf("no SG521 in %+v", got)
	}
	f := got[i]
	want := "subprocess.run runs a download (script, line 3)"
	if f.Message != want || f.Location() != "scripts/check.py:4:1" || f.Excerpt != "subprocess.run(['bash', '-c', script])" || f.Name != "download-exec" {
		t.Fatalf("finding %+v; want message %q", f, want)
	}
}
