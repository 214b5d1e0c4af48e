package secscan

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/admission/secscan/textnorm"
)

// kind is what a file is to the rules: prose the model reads, a script
// something runs, or a tool description.
type kind int

const (
	kindProse kind = iota
	kindScript
	kindTool
)

// scriptExts are the endings of files that run.
var scriptExts = map[string]bool{
	".sh": true, ".bash": true, ".zsh": true, ".fish": true, ".ksh": true,
	".py": true, ".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".mts": true,
	".rb": true, ".pl": true, ".php": true, ".lua": true, ".ps1": true, ".psm1": true,
	".bat": true, ".cmd": true, ".go": true, ".r": true,
}

// kindOf tells scripts (by ending, by a #! line, or by living in a
// scripts/ folder) from prose.
func kindOf(name string, data []byte) kind {
	if scriptExts[strings.ToLower(path.Ext(name))] || bytes.HasPrefix(data, []byte("#!")) ||
		strings.HasPrefix(name, "scripts/") || strings.Contains(name, "/scripts/") {
		return kindScript
	}
	return kindProse
}

// Rule is one check of the scanner.
type Rule struct {
	// ID is stable across releases (SG101 …); Name is short and readable.
	ID, Name string
	// Title is one line: what the rule finds.
	Title string
	// Severity is a finding's severity in a script or tool description;
	// InProse, when set, is its severity in prose (documentation that
	// shows a command differs from a script that runs it).
	Severity, InProse Severity
	// Why the finding matters, and how to fix it.
	Why, Fix string
	// Kinds the rule reads (none: every kind).
	kinds []kind
	// patterns are matched line by line; unicode rules use runes instead.
	patterns []*pattern
	runes    func(r rune) bool
	minRun   int // with runes: how many in a row make a finding
	message  string
	// triggers are lower-case strings one of which every match of
	// patterns contains: a line (lower-cased) with none of them is not
	// matched against the patterns at all. Nil: always matched.
	// TestTriggersMissNothing holds them to the patterns. longLine, when
	// not zero, matches lines at least that long whatever they contain.
	triggers []string
	longLine int
	// parsed marks a rule found by reading a script with a parser (shell.go),
	// not by patterns: scanLines passes over it.
	parsed bool
	// whole marks a rule about a file as a whole, not its lines: a file the
	// scanner cannot read (roles.go). scanLines passes over it.
	whole bool
	// derived marks a rule found on the lines a skill changed from the
	// reference it is derived from (lineage.go): scanLines passes over it.
	derived bool
	// shellForms, when not zero, says that the first shellForms patterns are
	// shell pipelines that the shell rules read better on a script the
	// parser reads: there a finding matched only by them is dropped
	// (dropShellForms).
	shellForms int
}

func (r *Rule) reads(k kind) bool {
	if len(r.kinds) == 0 {
		return true
	}
	for _, x := range r.kinds {
		if x == k {
			return true
		}
	}
	return false
}

func (r *Rule) severity(k kind) Severity {
	if k == kindProse && r.InProse != "" {
		return r.InProse
	}
	return r.Severity
}

// pattern is one of a rule's regular expressions, compiled at its first
// use rather than at package initialisation: the rule table's ~100
// expressions (~0.9 MB) were compiled before main in every command, scan,
// rescan and --help included, which never scan content. TestRules compiles
// them all.
type pattern struct {
	expr string
	re   func() *regexp.Regexp
}

func re(s string) *pattern {
	return &pattern{expr: s, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(s) })}
}

// FindIndex is the compiled expression's FindIndex.
func (p *pattern) FindIndex(b []byte) []int { return p.re().FindIndex(b) }

// Match is the compiled expression's Match.
func (p *pattern) Match(b []byte) bool { return p.re().Match(b) }

// String is the expression's source text.
func (p *pattern) String() string { return p.expr }

// shells are the interpreters a payload is piped into.
const shells = `(?:sudo\s+)?(?:ba|z|da|k)?sh|python[23]?|perl|ruby|node|php`

// Rules are the scanner's rules, in id order. Each has positive and
// negative cases in rules_test.go.
var Rules = []*Rule{
	{
		ID: "SG101", Name: "prompt-override", Severity: High,
		Title:    "instructions telling the model to ignore or override its instructions",
		Why:      "A skill's text reaches the model as instructions; text that tells it to drop its system or user instructions is a prompt injection that hands control of the agent to the skill's author.",
		Fix:      "Remove the sentence. A skill describes a task; it never asks the model to set aside its other instructions.",
		message:  "tells the model to ignore or override its instructions",
		triggers: []string{"ignore", "disregard", "forget", "override", "bypass", "bound", "system"},
		patterns: []*pattern{
			re(`(?i)\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*(?:previous|prior|above|earlier|preceding|system|developer|original|existing|other)\s+(?:instructions?|prompts?|rules|guidelines|directives|guardrails|policies)\b`),
			re(`(?i)\byou\s+(?:are|have\s+been)\s+no\s+longer\s+bound\s+by\b`),
			re(`(?i)\b(?:new|updated)\s+system\s+(?:prompt|instructions?)\s*:`),
		},
	},
	{
		ID: "SG102", Name: "conceal-from-user", Severity: High,
		Title:    "instructions to hide actions from the user",
		Why:      "An agent acts for its user; text that tells it to keep an action from the user, or to act silently, is how a malicious skill hides what it does.",
		Fix:      "Remove the instruction. Actions a skill asks for must be visible to the user.",
		message:  "tells the model to hide what it does from the user",
		triggers: []string{"user", "silently", "secretly", "covertly", "quietly"},
		patterns: []*pattern{
			re(`(?i)\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention\s+(?:this|it)\s+to|reveal\s+(?:this|it)\s+to|disclose\s+(?:this|it)\s+to|notify|alert)\s+the\s+user\b`),
			re(`(?i)\bwithout\s+(?:telling|informing|notifying|alerting)\s+the\s+user\b`),
			re(`(?i)\b(?:hide|conceal|keep)\s+(?:this|it|these|them|that)\s+(?:secret\s+)?from\s+the\s+user\b`),
			re(`(?i)\b(?:silently|secretly|covertly|quietly)\s+(?:send|upload|exfiltrate|transmit|post|forward|copy\s+\S+\s+to)\b`),
		},
	},
	{
		ID: "SG201", Name: "unicode-tags", Severity: Critical,
		Title:   "Unicode tag characters (invisible text)",
		Why:     "Tag characters (U+E0000–U+E007F) are invisible in editors and reviews but read by the model: they smuggle hidden instructions past a human reviewer.",
		Fix:     "Delete the tag characters; nothing legitimate in a skill needs them.",
		message: "invisible Unicode tag characters",
		runes:   func(r rune) bool { return r >= 0xE0000 && r <= 0xE007F },
		minRun:  1,
	},
	{
		ID: "SG202", Name: "bidi-control", Severity: High,
		Title:   "bidirectional control characters",
		Why:     "Bidi overrides and isolates (U+202A–U+202E, U+2066–U+2069) make text display in another order than it is read (Trojan Source): a reviewer sees one command, the shell or model gets another.",
		Fix:     "Delete the control characters; write right-to-left text without explicit overrides.",
		message: "bidirectional control characters",
		runes:   func(r rune) bool { return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) },
		minRun:  1,
	},
	{
		ID: "SG203", Name: "zero-width-run", Severity: High,
		Title:   "runs of zero-width characters",
		Why:     "Several zero-width characters in a row carry hidden data or split words so that filters miss them; a human reviewer sees nothing.",
		Fix:     "Delete the zero-width characters.",
		message: "a run of zero-width characters",
		runes: func(r rune) bool {
			return r == 0x200B || r == 0x200C || r == 0x200D || r == 0x2060 || r == 0xFEFF || r == 0x180E
		},
		minRun: 2,
	},
	// SG204–SG206: text normalised before the prose rules (prose.go).
	{
		ID: "SG204", Name: "mixed-script-word", Severity: Medium,
		Title:   "a word mixing Latin letters with look-alike letters of another script",
		Why:     "A word such as \"Ign\u043ere\" with a Cyrillic \u043e reads as the English word but does not match it: the look-alike letter hides an instruction from filters and reviewers. The prose rules also read the text with such letters folded (a match there is reported under its own rule); this finding is the disguise itself.",
		Fix:     "Write the word in one script.",
		message: "a word mixing Latin letters with look-alike letters of another script",
		kinds:   []kind{kindProse, kindTool},
	},
	{
		ID: "SG205", Name: "zero-width-in-word", Severity: Medium,
		Title:   "a zero-width character inside a word",
		Why:     "One zero-width space, joiner or word joiner inside a Latin word is invisible to a reviewer but makes the word differ from itself for a filter. The prose rules also read the text without it (a match there is reported under its own rule).",
		Fix:     "Delete the zero-width character.",
		message: "a zero-width character inside a word",
		kinds:   []kind{kindProse, kindTool},
	},
	{
		ID: "SG206", Name: "soft-hyphen-in-word", Severity: Low,
		Title:   "a soft hyphen inside a word",
		Why:     "A soft hyphen (U+00AD) is invisible unless the word breaks at a line end; inside a word it makes the word differ from itself for a filter. Honest text uses it for hyphenation, so it is low on its own; the prose rules also read the text without it.",
		Fix:     "Delete the soft hyphen unless the text needs a hyphenation hint there.",
		message: "a soft hyphen inside a word",
		kinds:   []kind{kindProse, kindTool},
	},
	{
		ID: "SG301", Name: "credential-files", Severity: High, InProse: Medium,
		Title:    "reading credential files",
		Why:      "SSH keys, cloud credentials and password stores let whoever reads them act as the user elsewhere; a skill has no business reading them.",
		Fix:      "Remove the access. A skill that needs a credential declares it in mcp.json and gets it from skillgate's credential store.",
		message:  "reads a credential file",
		triggers: []string{".ssh", ".aws", ".gnupg", ".kube", ".docker", ".netrc", ".git-credentials", ".config/gcloud", ".azure", ".pypirc", ".npmrc", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "/etc/", "login data", "cookies.sqlite", "logins.json", "key3.db", "key4.db"},
		patterns: []*pattern{
			re(`(?:~|\$HOME|\$\{HOME\}|%USERPROFILE%|/home/[\w.-]+|/root)/\.(?:ssh|aws/credentials|gnupg|kube/config|docker/config\.json|netrc|git-credentials|config/gcloud|azure|pypirc|npmrc)\b`),
			re(`\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?:[^.]|$)`),
			re(`/etc/(?:shadow|gshadow|sudoers)\b`),
			re(`(?i)\b(?:Login Data|cookies\.sqlite|logins\.json|key[34]\.db)\b`),
		},
	},
	{
		ID: "SG302", Name: "environment-dump", Severity: High,
		Title:    "dumping the whole environment",
		Why:      "The environment holds tokens and keys; a script that prints, saves or sends all of it leaks every secret the agent's process has.",
		Fix:      "Read only the variables the skill needs, by name.",
		message:  "dumps the whole environment",
		triggers: []string{"env", "export"},
		patterns: []*pattern{
			re(`(?:^\s*|[;&|]\s*|\$\(\s*)(?:env|printenv|export\s+-p)\s*(?:>|\)|$|\|\s*(?:curl|wget|nc|ncat|netcat|base64|xxd|gzip|tee|python[23]?|node|openssl|ssh|scp|socat)\b)`),
			re(`(?:json\.dumps|str|repr|print|dict|list)\(\s*(?:dict\(\s*)?os\.environ\s*\)`),
			re(`(?:JSON\.stringify|Object\.(?:entries|keys|values))\(\s*process\.env\s*\)`),
			re(`/proc/(?:self|\d+|\$\$)/environ\b`),
		},
	},
	{
		ID: "SG401", Name: "network-send", Severity: Medium,
		Title:    "sending data to the network from a script",
		Why:      "Uploading files or posting data is how stolen data leaves the machine; any host a skill sends to must be one its reviewer expects.",
		Fix:      "Declare the host in the skill's documentation and its server's dataEgress, or remove the upload.",
		message:  "sends data to the network",
		kinds:    []kind{kindScript},
		triggers: []string{"curl", "wget", "requests.", "axios.", "http", "got.", "superagent.", "fetch(", "nc", "invoke-"},
		patterns: []*pattern{
			re(`\bcurl\b[^\n|;]*\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|--upload-file)\b`),
			re(`\bwget\b[^\n]*--post-(?:data|file)\b`),
			re(`\brequests\.(?:post|put|patch)\(`),
			re(`\b(?:axios|http|https|got|superagent)\.(?:post|put|patch)\(`),
			re(`(?i)\bfetch\([^)\n]*method\s*:\s*['"](?:post|put|patch)['"]`),
			re(`\b(?:nc|ncat|netcat)\s+(?:-\w+\s+)*[\w.-]+\s+\d+\s*<`),
			re(`(?i)\bInvoke-(?:WebRequest|RestMethod)\b[^\n]*-Method\s+(?:Post|Put)\b`),
		},
	},
	{
		ID: "SG402", Name: "dns-tunnel", Severity: High,
		Title:    "data smuggled in DNS look-ups",
		Why:      "Putting a command's output or a variable into a host name sends it to whoever runs that domain's name server, past most network filters.",
		Fix:      "Remove the look-up; resolve only fixed host names.",
		message:  "puts data into a DNS look-up",
		triggers: []string{"nslookup", "dig", "host", "ping", "gethostbyname", "getaddrinfo", "dns."},
		patterns: []*pattern{
			re(`\b(?:nslookup|dig|host|ping)\s+(?:-\S+\s+)*[^\s;|]*(?:\$\(|\$\{|\$[A-Za-z_]|` + "`" + `)[^\s;|]*\.[A-Za-z]{2,}`),
			re(`\b(?:socket\.gethostbyname|socket\.getaddrinfo|dns\.(?:lookup|resolve\w*))\(\s*[^)\n]*(?:\+|\bf['"]|\.format\(|\$\{)`),
		},
	},
	{
		ID: "SG501", Name: "download-execute", Severity: Critical, InProse: Medium,
		Title:      "downloading code and running it at once",
		Why:        "Piping a download into a shell runs whatever the server sends today, unreviewed and unpinned; it is the most common dropper in malicious skills.",
		Fix:        "Ship the code in the skill (where it is reviewed and digested), or download to a file, check its SHA-256 against a pinned value, then run it.",
		message:    "downloads code and runs it",
		triggers:   []string{"curl", "wget", "fetch", "iex", "invoke-expression", "urlopen", "requests.get"},
		shellForms: 2,
		patterns: []*pattern{
			re(`\b(?:curl|wget|fetch)\b[^\n|]*\|\s*` + `(?:` + shells + `)\b`),
			re(`\b(?:` + shells + `)\s+(?:-\w+\s+)*<\(\s*(?:curl|wget)\b`),
			re(`(?i)\b(?:iex|Invoke-Expression)\b[^\n]*\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod|DownloadString|Net\.WebClient)\b`),
			re(`(?i)\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n]*\|\s*(?:iex|Invoke-Expression)\b`),
			re(`\b(?:exec|eval)\(\s*(?:urllib\.request\.urlopen|requests\.get)\(`),
		},
	},
	{
		ID: "SG502", Name: "encoded-payload", Severity: Critical,
		Title:    "an encoded payload decoded into a shell or eval",
		Why:      "Decoding base64 or hex straight into a shell or eval hides the code that runs from every reviewer and scanner.",
		Fix:      "Ship the code in plain text, or remove it.",
		message:  "decodes a payload and runs it",
		triggers: []string{"base64", "xxd", "exec", "eval", "compile", "function", "settimeout", "powershell", "pwsh"},
		patterns: []*pattern{
			re(`\bbase64\s+(?:-d|--decode|-D)\b[^\n]*\|\s*(?:` + shells + `)\b`),
			re(`\|\s*base64\s+(?:-d|--decode|-D)\s*\|\s*(?:` + shells + `)\b`),
			re(`\bxxd\s+-r\b[^\n]*\|\s*(?:` + shells + `)\b`),
			re(`\b(?:exec|eval|compile)\s*\(\s*(?:base64\.b64decode|base64\.decodebytes|codecs\.decode|bytes\.fromhex|zlib\.decompress|marshal\.loads)\b`),
			re(`\b(?:eval|Function|setTimeout)\s*\(\s*(?:atob|Buffer\.from|unescape|decodeURIComponent)\s*\(`),
			re(`(?i)\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]*\s-(?:e|ec|enc|encodedcommand)\s+[A-Za-z0-9+/=]{16,}`),
		},
	},
	{
		ID: "SG503", Name: "obfuscated-code", Severity: Medium,
		Title:    "obfuscated code",
		Why:      "Long encoded blobs, character-code chains and hex-escaped strings in a script hide what it does; legitimate skills have no reason to.",
		Fix:      "Replace the obfuscated code with its plain source.",
		message:  "obfuscated code",
		kinds:    []kind{kindScript},
		triggers: []string{"fromcharcode", "\\x", "chr("}, longLine: 402,
		patterns: []*pattern{
			re(`['"][A-Za-z0-9+/]{400,}={0,2}['"]`),
			re(`String\.fromCharCode\(\s*\d+\s*(?:,\s*\d+\s*){15,}\)`),
			re(`(?:\\x[0-9a-fA-F]{2}){24,}`),
			re(`(?:chr\(\s*\d+\s*\)\s*\+\s*){10,}`),
		},
	},
	{
		ID: "SG504", Name: "download-piped-to-shell", Severity: Critical,
		Title:   "a shell script that pipes a download into an interpreter",
		Why:     "A download piped into a shell or interpreter (curl … | sh, wget -qO- … | sudo bash -s) runs whatever the server sends today, unreviewed and unpinned: the commonest dropper in malicious skills.",
		Fix:     "Ship the code in the skill (where it is reviewed and digested), or download to a file, check its SHA-256 against a pinned value, then run it.",
		message: "pipes a download into an interpreter",
		kinds:   []kind{kindScript},
		parsed:  true,
	},
	{
		ID: "SG505", Name: "download-substituted-into-shell", Severity: Critical,
		Title:   "a shell script that gives a download to an interpreter as its program",
		Why:     "A download substituted into an interpreter's program (sh -c \"$(curl …)\", bash <(curl …), eval \"$(wget -O- …)\", source <(curl …)) runs whatever the server sends, unreviewed, without a pipe for a reader to notice.",
		Fix:     "Ship the code in the skill, or download to a file, check its SHA-256 against a pinned value, then run it.",
		message: "runs a download as a program",
		kinds:   []kind{kindScript},
		parsed:  true,
	},
	{
		ID: "SG506", Name: "download-then-run", Severity: Critical,
		Title:   "a shell script that runs a file a download was saved to, in the same script or another of the skill",
		Why:     "Saving a download to a file and running it later (curl -o f …; sh f), possibly from another script of the skill, is a dropper split so that no one line looks like one.",
		Fix:     "Ship the file in the skill, or check the download's SHA-256 against a pinned value before running it.",
		message: "runs a file a download was saved to",
		kinds:   []kind{kindScript},
		parsed:  true,
	},
	// SG507: payloads decoded and scanned again (decoded.go).
	{
		ID: "SG507", Name: "decoded-payload-runs", Severity: Critical,
		Title:   "a script literal that decodes (base64, hex, escapes, ROT13) to code that runs something",
		Why:     "A command line, a download or a process start hidden in base64, hex, \\x escapes or ROT13 is meant to pass reviewers and scanners; a script only hides code it means to run. The decoded text is also read by every pattern rule (a match there is reported under its own rule, at the literal).",
		Fix:     "Ship the code in plain text, or remove it.",
		message: "decodes to code that runs something",
		kinds:   []kind{kindScript},
	},
	{
		ID: "SG510", Name: "reverse-shell", Severity: Critical,
		Title:   "a shell script, or a shell block of the skill's Markdown, that runs a shell on a network connection",
		Why:     "A reverse shell (bash -i >& /dev/tcp/H/P, nc -e /bin/sh, a mkfifo pipeline through nc, socat exec:… tcp:…) hands the user's machine to whoever listens at the other end.",
		Fix:     "Remove it. No skill needs a shell whose input and output are a network connection.",
		message: "runs a shell on a network connection",
		kinds:   []kind{kindScript},
		parsed:  true,
	},
	{
		ID: "SG511", Name: "decoded-payload-to-shell", Severity: Critical,
		Title:   "a shell script, or a shell block of the skill's Markdown, that decodes data and runs it as a program",
		Why:     "Data decoded by the script (base64 -d, xxd -r, printf '\\x..', echo -e, rev, gunzip) and piped into a shell or substituted into eval or sh -c hides the code that runs from every reviewer.",
		Fix:     "Ship the code in plain text, or remove it.",
		message: "decodes data and runs it as a program",
		kinds:   []kind{kindScript},
		parsed:  true,
	},
	{
		ID: "SG520", Name: "decoded-exec", Severity: Critical,
		Title:   "Python or JavaScript that runs a constant decoded at run time",
		Why:     "A command or program hidden as base64, hex, rot13, zlib or marshal data and decoded just before exec, eval, subprocess, os.system or child_process runs it is a payload kept from review; the taint analysis follows the decoded value through assignments into the call.",
		Fix:     "Write the command in the script as plain text, or remove it.",
		message: "runs a decoded constant",
		parsed:  true,
	},
	{
		ID: "SG521", Name: "download-exec", Severity: Critical,
		Title:   "Python or JavaScript that runs what it downloads",
		Why:     "requests.get(…).text, urlopen or fetch(…).text() handed to exec, eval, subprocess or child_process, or a file urlretrieve saved and os.system then runs, executes whatever the server sends at the time, never what was reviewed.",
		Fix:     "Ship the code in the skill, or download a pinned, verified artefact that is not run as a program.",
		message: "runs a download",
		parsed:  true,
	},
	{
		ID: "SG522", Name: "secret-upload", Severity: High,
		Title:   "Python or JavaScript that sends the environment, credential files or the user's files over the network",
		Why:     "The whole environment (os.environ, process.env), a credential file (.ssh, .aws, .env, keychains) or files found by walking the user's home, flowing into the body of a network send (requests.post, urlopen with data, fetch with a body, a socket send), is exfiltration. One named variable sent as a header (an API key to its API) is not a finding.",
		Fix:     "Send only what the task needs, named, to the service the skill documents.",
		message: "uploads secrets or the user's files",
		parsed:  true,
	},
	{
		ID: "SG523", Name: "reverse-shell-code", Severity: Critical,
		Title:   "Python or JavaScript that wires a network socket to a shell",
		Why:     "A socket dup2'ed onto the standard streams before pty.spawn or a subprocess of a shell, or node's net.connect piped into spawn('/bin/sh'), hands a remote party a shell on the user's machine.",
		Fix:     "Remove it. A skill never gives a remote party a shell.",
		message: "a reverse shell",
		parsed:  true,
	},
	{
		ID: "SG524", Name: "destructive-code", Severity: High,
		Title:   "Python or JavaScript that deletes the home or root directory",
		Why:     "shutil.rmtree, os.remove or fs.rmSync of the home directory (expanduser('~'), Path.home(), os.homedir(), $HOME) or of / destroys the user's files; deleting a folder inside them is not this finding.",
		Fix:     "Delete only what the skill created, by its own path.",
		message: "deletes the home or root directory",
		parsed:  true,
	},
	{
		ID: "SG525", Name: "persistence-code", Severity: High,
		Title:   "Python or JavaScript that writes a file that runs code later",
		Why:     "open(…, 'a'/'w'), write_text or fs.writeFileSync on a shell start-up file, authorized_keys, a cron table, a systemd unit, a launch agent or a git hook keeps code (or a key) working after the session ends.",
		Fix:     "Remove it. A skill runs when an agent loads it, never on its own.",
		message: "makes itself persistent",
		parsed:  true,
	},
	{
		ID: "SG526", Name: "unbounded-resource", Severity: High,
		Title:   "Python or JavaScript that exhausts memory or processes",
		Why:     "A while True or for(;;) loop with no break that appends growing data or forks, or an allocation of a gigabyte or more at once (b'x' * 10**10, bytearray(1 << 40)), takes the user's machine down.",
		Fix:     "Bound the loop and the allocation.",
		message: "uses memory or processes without bound",
		parsed:  true,
	},
	{
		ID: "SG601", Name: "tool-steering", Severity: High,
		Title:   "a tool description that steers the model to other tools or to secrets",
		Why:     "A tool's description reaches the model verbatim. One that tells it to call other tools first, or to pass keys, tokens or files along, poisons every conversation the tool is listed in.",
		Fix:     "The server's author must describe only what the tool does; do not approve the tool until then.",
		message: "steers the model to other tools or to secrets",
		kinds:   []kind{kindTool},
		patterns: []*pattern{
			re(`(?i)<\s*/?\s*(?:important|system|instructions?|secret)\s*>`),
			re(`(?i)\b(?:before|after|instead\s+of|prior\s+to)\s+(?:using|calling|invoking|running)\s+(?:this|that|any|the)\b[^.\n]{0,100}\b(?:call|use|invoke|read|run)\b`),
			re(`(?i)\b(?:first|always|must)\s+(?:call|invoke|use|run)\s+(?:the\s+)?` + "`?" + `[\w.-]+` + "`?" + `\s+tool\b`),
			re(`(?i)\b(?:pass|include|send|provide|append|attach|add)\b[^.\n]{0,60}\b(?:api[\s_-]?keys?|access[\s_-]?tokens?|tokens?|passwords?|secrets?|credentials?|private[\s_-]?keys?|ssh[\s_-]?keys?|\.env\b|cookies?)\b`),
		},
	},
	{
		ID: "SG701", Name: "destructive-command", Severity: High,
		Title:    "destructive shell commands",
		Why:      "Deleting a home or root directory, formatting a disk or a fork bomb destroys the user's machine; no skill needs them.",
		Fix:      "Remove the command, or narrow it to a directory the skill created.",
		message:  "a destructive command",
		triggers: []string{"rm", "mkfs", "/dev/", ":(", "chmod"},
		patterns: []*pattern{
			re(`\brm\s+(?:-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-[a-zA-Z]+\s+)*|-[a-zA-Z]+\s+-[a-zA-Z]*[rR][a-zA-Z]*\s+)(?:--no-preserve-root\s+)?(?:/\*?|~/?\*?|\$HOME/?\*?|\$\{HOME\}/?\*?|/(?:etc|usr|bin|boot|var|home|lib)/?\*?)(?:\s|$|;|&|\||"|')`),
			re(`\bmkfs(?:\.\w+)?\s+(?:-\S+\s+)*/dev/`),
			re(`\bdd\b[^\n]*\bof=/dev/(?:sd|hd|vd|xvd|nvme|disk|mmcblk)`),
			re(`:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`),
			re(`\bchmod\s+-R\s+0?777\s+/(?:\s|$)`),
			re(`>\s*/dev/(?:sd[a-z]|nvme\d|hd[a-z])\b`),
		},
	},
	{
		ID: "SG702", Name: "destroy-files", Severity: Critical,
		Title:   "a shell script, or a shell block of the skill's Markdown, that deletes or shreds the root, a system or the home folder",
		Why:     "rm -rf \"$HOME\"/*, find / -delete or find ~ -exec shred destroys the user's files or system; the parser reads them quoted, split over options, or through a constant variable.",
		Fix:     "Remove the command, or narrow it to a folder the skill created.",
		message: "deletes the root, a system or the home folder",
		kinds:   []kind{kindScript},
		parsed:  true,
	},
	{
		ID: "SG703", Name: "wipe-disk", Severity: Critical,
		Title:   "a shell script, or a shell block of the skill's Markdown, that overwrites or formats a disk",
		Why:     "dd of=/dev/sda, mkfs, wipefs or a redirection onto a disk device destroys everything on it.",
		Fix:     "Remove the command.",
		message: "overwrites or formats a disk",
		kinds:   []kind{kindScript},
		parsed:  true,
	},
	{
		ID: "SG704", Name: "encrypt-files", Severity: Critical,
		Title:   "a shell script, or a shell block of the skill's Markdown, that encrypts the home folder's files",
		Why:     "Encrypting the user's files (openssl enc, gpg -c) in a loop over the home folder that deletes the originals, or in a find over it, is ransomware.",
		Fix:     "Remove it.",
		message: "encrypts the home folder's files",
		kinds:   []kind{kindScript},
		parsed:  true,
	},
	{
		ID: "SG801", Name: "persistence", Severity: High, InProse: Medium,
		Title:    "installing itself to run again later",
		Why:      "Cron entries, shell start-up files, systemd units, launch agents and authorized_keys keep an attacker's code running (or an attacker's key working) after the session ends.",
		Fix:      "Remove it. A skill runs when an agent loads it, never on its own.",
		message:  "makes itself persistent",
		triggers: []string{"bashrc", "zshrc", "profile", "bash_login", "zshenv", "config.fish", "cron", "systemd", "systemctl", "launchctl", "launchagents", "autostart", "authorized_keys"},
		patterns: []*pattern{
			re(`(?:>>?|\btee\s+(?:-a\s+)?)\s*["']?(?:~|\$HOME|\$\{HOME\})/\.(?:bashrc|zshrc|profile|bash_profile|bash_login|zprofile|zshenv|config/fish/config\.fish)\b`),
			re(`(?:\|\s*crontab\s+-\s*(?:$|;|&)|\bcrontab\s+[^-\s]\S*|/etc/cron\.(?:d|daily|hourly|weekly|monthly)/|/var/spool/cron/)`),
			re(`(?:/etc/systemd/system/|\.config/systemd/user/)\S+\.(?:service|timer)\b|\bsystemctl\s+(?:--user\s+)?enable\b`),
			re(`\blaunchctl\s+(?:load|bootstrap)\b|Library/LaunchAgents/|\.config/autostart/`),
			re(`(?:>>|\btee\s+-a\s+)\s*["']?\S*\.ssh/authorized_keys\b`),
		},
	},
	{
		ID: "SG802", Name: "shell-startup-file", Severity: High,
		Title:   "a shell script, or a shell block of the skill's Markdown, that writes into a shell start-up file",
		Why:     "A line added to ~/.bashrc, ~/.profile or /etc/profile.d (by >>, tee, cp, ln, mv, install or sed -i) runs in every shell the user opens, long after the skill's session.",
		Fix:     "Remove it. A skill runs when an agent loads it; tell the user what to add instead.",
		message: "writes into a shell start-up file",
		kinds:   []kind{kindScript},
		parsed:  true,
	},
	{
		ID: "SG803", Name: "scheduled-task", Severity: High,
		Title:   "a shell script, or a shell block of the skill's Markdown, that installs a cron entry, a systemd unit, a launchd job or an autostart entry",
		Why:     "crontab -, a file in /etc/cron*, a unit in ~/.config/systemd/user with systemctl enable, or a launch agent runs the skill's code again on a schedule or at every log-in.",
		Fix:     "Remove it. A skill runs when an agent loads it, never on its own.",
		message: "installs a task that runs again later",
		kinds:   []kind{kindScript},
		parsed:  true,
	},
	{
		ID: "SG804", Name: "git-hook", Severity: High,
		Title:   "a shell script, or a shell block of the skill's Markdown, that writes or enables a git hook",
		Why:     "A file written into .git/hooks (also through $(git rev-parse --git-dir)) or a core.hooksPath runs on every commit or checkout of the user's repository.",
		Fix:     "Remove it, or ship the hook as documentation the user installs themselves.",
		message: "installs a git hook",
		kinds:   []kind{kindScript},
		parsed:  true,
	},
	{
		ID: "SG805", Name: "authorized-keys", Severity: High,
		Title:   "a shell script, or a shell block of the skill's Markdown, that writes into an ssh authorized_keys file",
		Why:     "A key added to authorized_keys lets its owner log in to the user's machine.",
		Fix:     "Remove it.",
		message: "writes into authorized_keys",
		kinds:   []kind{kindScript},
		parsed:  true,
	},
	{
		ID: "SG901", Name: "not-utf8", Severity: High, InProse: Low,
		Title:   "a file that is not UTF-8 text",
		Why:     "A script with one byte that is not UTF-8 was skipped by text scanners and reported as a pass; its lines are read here with each such byte taken as Latin-1, but a file in another encoding may hide what it runs. Severity follows the file's role: high when something runs it (#! line, mcp.json, an interpreter named in the skill), medium for a script by its name, low otherwise.",
		Fix:     "Save the file as UTF-8 (or plain ASCII).",
		message: "is not UTF-8 text",
		whole:   true,
	},
	{
		ID: "SG902", Name: "too-large-to-scan", Severity: High, InProse: Low,
		Title:   "a file too large for the scanner or for the shell parser",
		Why:     "A file beyond the scanner's size limit is not read, and a shell script beyond the parser's bound (256 KiB) is read by the text rules only: size is a way to hide a payload. Severity follows the file's role, as for SG901.",
		Fix:     "Split the file, or ship generated data outside the skill; a script that runs should be small enough to review.",
		message: "is too large to scan",
		whole:   true,
	},
	{
		ID: "SG903", Name: "binary-file", Severity: High, InProse: Low,
		Title:   "a binary file (compiled code or data) the scanner cannot read",
		Why:     "A binary file (a NUL byte in its first 8 KiB) is not read by any rule: compiled code that the skill runs is unreviewable here. Severity follows the file's role: high when something runs it, low for an image or other data nothing runs.",
		Fix:     "Ship source code instead of a compiled program, or have the operator review the binary and suppress the finding with a reason.",
		message: "is binary",
		whole:   true,
	},
	{
		ID: "SG904", Name: "shell-not-parsed", Severity: High, InProse: Low,
		Title:   "a shell script the shell parser cannot read",
		Why:     "The shell rules (SG504–SG506) read a script's commands from its syntax tree; a script that does not parse as bash (a syntax error, zsh-only syntax) is read by the text rules only, which miss a download run over several lines or through a variable. Severity follows the file's role, as for SG901.",
		Fix:     "Fix the syntax error, or write the script in POSIX sh or bash.",
		message: "does not parse as a shell script",
		whole:   true,
	},
	{
		ID: "SG950", Name: "changed-line-of-known-skill", Severity: High,
		Title:   "a line added to a script of a known skill that makes a network call, starts a process, walks files, decodes data or loops without bound",
		Why:     "Most malicious skills are copies of popular skills with a few lines added to one script; among thousands of honest lines, those few are what matters. A skill derived from a reference skill (the registry's approved and first_party skills, and the operator's scanner.references) is compared with it, and a capability on an added or changed line is at least high: the reference did not need it.",
		Fix:     "Review the diff against the reference shown in the report: remove the added lines, or, if the change is intended, have the operator suppress the finding with a reason.",
		message: "adds a line to a known skill's script that",
		derived: true,
	},
}

// excerptMax bounds a finding's excerpt, in characters.
const excerptMax = 160

// scanText runs every rule that reads k over data, line by line.
func scanText(name string, data []byte, k kind, maxPerRule int) []Finding {
	out := scanLines(name, data, k, maxPerRule, true)
	return append(out, reread(name, data, k, maxPerRule, out)...)
}

// scanLines is scanText; prefilter false matches every pattern against
// every line, whatever its triggers (the reference the prefilter is
// tested against).
func scanLines(name string, data []byte, k kind, maxPerRule int, prefilter bool) []Finding {
	var out []Finding
	count := map[string]int{}
	add := func(r *Rule, lineNo int, line []byte, at, end int) {
		if count[r.ID] >= maxPerRule {
			return
		}
		count[r.ID]++
		out = append(out, Finding{
			Rule: r.ID, Name: r.Name, Severity: r.severity(k), File: name,
			Line: lineNo, Column: utf8.RuneCount(line[:at]) + 1,
			Excerpt: excerpt(line, at, end), Message: r.message, Why: r.Why, Fix: r.Fix,
		})
	}
	var lower []byte
	lineNo := 0
	for len(data) > 0 || lineNo == 0 {
		lineNo++
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		lower = asciiLower(lower[:0], line)
		wide := hasWideRune(line)
		for _, r := range Rules {
			if !r.reads(k) || r.parsed || r.whole || r.derived {
				continue
			}
			if r.runes != nil {
				if !prefilter || wide {
					if at, end, ok := runOf(line, r.runes, r.minRun); ok {
						add(r, lineNo, line, at, end)
					}
				}
				continue
			}
			if prefilter && !r.triggered(lower) {
				continue
			}
			for _, p := range r.patterns {
				if loc := p.FindIndex(line); loc != nil {
					add(r, lineNo, line, loc[0], loc[1])
					break
				}
			}
		}
		if len(data) == 0 {
			break
		}
	}
	return out
}

// runOf finds the first run of at least min runes matching is in line; a
// byte-order mark at the start of a file's first line does not count.
func runOf(line []byte, is func(rune) bool, min int) (at, end int, ok bool) {
	start, n := -1, 0
	for i, r := range string(line) {
		if is(r) && !(i == 0 && r == 0xFEFF && min > 1) {
			if n == 0 {
				start = i
			}
			n++
			if n >= min {
				j := i + utf8.RuneLen(r)
				for j < len(line) {
					r2, size := utf8.DecodeRune(line[j:])
					if !is(r2) {
						break
					}
					j += size
				}
				return start, j, true
			}
			continue
		}
		n = 0
	}
	return 0, 0, false
}

// excerpt is line around [at, end), at most excerptMax characters, with
// characters a reader cannot see written as <U+XXXX>.
func excerpt(line []byte, at, end int) string {
	var b strings.Builder
	from := at
	for back := 0; from > 0 && back < 60; back++ {
		_, size := utf8.DecodeLastRune(line[:from])
		from -= size
	}
	if from > 0 {
		b.WriteString("…")
	}
	n := 0
	for i, r := range string(line[from:]) {
		if n >= excerptMax && from+i >= end {
			b.WriteString("…")
			break
		}
		n++
		if invisible(r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// invisible reports characters a reader of the excerpt would not see:
// control characters and what textnorm removes before the prose rules.
func invisible(r rune) bool {
	if r < 0x20 && r != '\t' || r == 0x7F {
		return true
	}
	return textnorm.Invisible(r)
}

// RuleByID returns the rule with this id, or nil.
func RuleByID(id string) *Rule {
	for _, r := range Rules {
		if r.ID == id || r.Name == id {
			return r
		}
	}
	return nil
}

// triggered reports whether the lower-cased line may match r's patterns.
func (r *Rule) triggered(lower []byte) bool {
	if r.triggers == nil || (r.longLine > 0 && len(lower) >= r.longLine) {
		return true
	}
	for _, t := range r.triggers {
		if bytes.Contains(lower, []byte(t)) {
			return true
		}
	}
	return false
}

// asciiLower appends line to dst with ASCII letters lower-cased (the
// triggers are ASCII; other bytes are kept as they are).
func asciiLower(dst, line []byte) []byte {
	for _, c := range line {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// hasWideRune reports whether line holds a character from U+1000 up, the
// range of every character the Unicode rules look for (their UTF-8 lead
// bytes are 0xE1 and above).
func hasWideRune(line []byte) bool {
	for _, c := range line {
		if c >= 0xE1 {
			return true
		}
	}
	return false
}
