package codescan

import (
	"strconv"
	"strings"
)

// Label is what an expression carries: a set of taints.
type Label uint16

// The labels.
const (
	// Decoded is a constant decoded at run time (base64, hex, rot13, zlib,
	// marshal, Buffer.from(…, 'base64'), atob).
	Decoded Label = 1 << iota
	// Network is data read from the network (requests.get, urlopen, fetch …).
	Network
	// EnvAll is the whole environment (os.environ, process.env, not one
	// variable of it).
	EnvAll
	// SecretFile is a path to credentials outside the skill (.ssh, .aws,
	// .env, keychains, /etc/shadow …).
	SecretFile
	// Home is the user's home directory (expanduser, Path.home, os.homedir,
	// ~, $HOME).
	Home
	// HomeFiles is files found by walking a folder of the user's home.
	HomeFiles
	// Persist is a path that runs code later (shell rc files,
	// authorized_keys, cron, systemd, LaunchAgents, .git/hooks).
	Persist
	// Socket is a network socket (socket.socket, net.connect).
	Socket
	// Process is a started process (spawn, Popen).
	Process
)

// Finding kinds of the analysis: which flow was found.
const (
	// FlowDecodedExec is a decoded constant run as code or as a command.
	FlowDecodedExec = "decoded-exec"
	// FlowDownloadExec is a download run as code or as a command.
	FlowDownloadExec = "download-exec"
	// FlowSecretSend is the environment, a credential file or the user's
	// files sent over the network.
	FlowSecretSend = "secret-send"
	// FlowReverseShell is a socket wired to a shell.
	FlowReverseShell = "reverse-shell"
	// FlowDestructive is a recursive delete of the home or root directory.
	FlowDestructive = "destructive"
	// FlowPersistence is a write to a file that runs code later.
	FlowPersistence = "persistence"
	// FlowUnbounded is a loop or allocation that exhausts memory or
	// processes.
	FlowUnbounded = "unbounded"
)

// Flow is one finding of the taint analysis.
type Flow struct {
	// Kind is one of the Flow* constants.
	Kind string
	// Line is the line of the sink (the call that runs, sends, deletes or
	// writes); SourceLine that of the source when it is another line (0
	// when inline or not applicable).
	Line, SourceLine int
	// Sink is the sink's name as written ("subprocess.run"), Source the
	// source's when known.
	Sink, Source string
}

// analysis is the state of one file's analysis.
type analysis struct {
	lang  Lang
	toks  []Token // without comments
	alias map[string]string
	vars  map[string]binding
	// downloads are the paths a download was saved to (urlretrieve's
	// second argument), with the download's line.
	downloads map[string]int
	flows     []Flow
	caps      []Capability
	// match is, for each opening bracket of toks, the index of the one
	// closing it (len(toks) when none does).
	match []int
	// args memoizes the label of each call's arguments, by the index of
	// its opening parenthesis: nested calls are labelled once each, so an
	// analysis is linear in the tokens whatever their nesting.
	args map[int]argLabel
	// argKeys are the keys args gained while the current token is read;
	// relabels counts the calls whose callbacks' calls were labelled again.
	argKeys  []int
	relabels int
	// strings is the label of each string and template token by the paths
	// it names (SecretFile, Persist, Home), matched once per token.
	strings []Label
}

// argLabel is a memoized label of a call's arguments.
type argLabel struct {
	label Label
	src   string
	line  int
}

// binding is what a name was last bound to.
type binding struct {
	label    Label
	line     int
	source   string
	homeRoot bool
}

// Analyze runs the taint analysis over one file of lang: the flows from a
// source to a sink it finds, in the order of the file. A file that does not
// tokenize is analysed as far as it tokenizes.
func Analyze(lang Lang, src []byte) []Flow {
	a := analyze(lang, src)
	return a.flows
}

func analyze(lang Lang, src []byte) *analysis {
	toks, _ := Tokenize(lang, src)
	code := make([]Token, 0, len(toks))
	for _, t := range toks {
		if t.Kind != Comment {
			code = append(code, t)
		}
	}
	a := &analysis{lang: lang, toks: code, alias: map[string]string{}, vars: map[string]binding{}, downloads: map[string]int{},
		match: matchBrackets(code), args: map[int]argLabel{}, strings: pathLabels(code)}
	a.imports()
	for i := range a.toks {
		bound := lang == JavaScript && a.callbackParams(i)
		memo := len(a.argKeys)
		a.assignment(i)
		a.call(i)
		if bound && a.relabels < maxRelabels {
			// The call's labelling memoized the calls inside its callbacks
			// before the parameters' uses were bound (body += c): they
			// are labelled again when reached. Only a call whose callback
			// was bound to a download or a decoded constant costs this,
			// and at most maxRelabels of them per file.
			a.relabels++
			for _, k := range a.argKeys[memo:] {
				delete(a.args, k)
			}
		}
		a.argKeys = a.argKeys[:memo]
	}
	a.loops()
	a.allocations()
	return a
}

// imports records the names imports bind: Python's import X as Y and from M
// import A as B, JavaScript's require and import.
func (a *analysis) imports() {
	t := a.toks
	for i := 0; i < len(t); i++ {
		switch {
		case a.lang == Python && t[i].Text == "import" && t[i].Kind == Name && (i == 0 || t[i-1].Kind == Newline || t[i-1].Text == ";"):
			j := i + 1
			for j < len(t) && t[j].Kind != Newline && t[j].Text != ";" {
				mod, k := dotted(t, j)
				if mod == "" {
					break
				}
				var name string
				if k+1 < len(t) && t[k].Text == "as" {
					name = t[k+1].Text
					k += 2
				} else {
					name = strings.SplitN(mod, ".", 2)[0]
					mod = name
				}
				a.alias[name] = mod
				j = k
				if j < len(t) && t[j].Text == "," {
					j++
				}
			}
		case a.lang == Python && t[i].Text == "from" && t[i].Kind == Name:
			mod, k := dotted(t, i+1)
			if mod == "" || k >= len(t) || t[k].Text != "import" {
				continue
			}
			for j := k + 1; j < len(t) && t[j].Kind != Newline && t[j].Text != ";"; j++ {
				if t[j].Kind != Name {
					continue
				}
				name := t[j].Text
				if j+2 < len(t) && t[j+1].Text == "as" {
					a.alias[t[j+2].Text] = mod + "." + name
					j += 2
					continue
				}
				a.alias[name] = mod + "." + name
			}
		case a.lang == JavaScript && t[i].Kind == Name && t[i].Text == "require" && i+3 < len(t) && t[i+1].Text == "(" && t[i+2].Kind == String && t[i+3].Text == ")":
			a.bindModule(i, jsModule(unquote(t[i+2].Text)))
		case a.lang == JavaScript && t[i].Kind == Name && t[i].Text == "from" && i+1 < len(t) && t[i+1].Kind == String:
			a.bindModule(i, jsModule(unquote(t[i+1].Text)))
		}
	}
}

// bindModule binds the names a JavaScript require or import before t[i]
// declares: const x = require(m), const {a, b: c} = require(m), import x
// from m, import * as x from m, import {a as b} from m.
func (a *analysis) bindModule(i int, mod string) {
	t := a.toks
	j := i - 1
	if j >= 0 && t[j].Text == "=" {
		j--
	}
	if j >= 0 && t[j].Kind == Name {
		a.alias[t[j].Text] = mod
		return
	}
	if j < 0 || t[j].Text != "}" {
		return
	}
	k := j - 1
	for k >= 0 && t[k].Text != "{" {
		k--
	}
	for m := k + 1; m < j; m++ {
		if t[m].Kind != Name {
			continue
		}
		name, local := t[m].Text, t[m].Text
		if m+2 < j && (t[m+1].Text == ":" || t[m+1].Text == "as") {
			local = t[m+2].Text
			m += 2
		}
		a.alias[local] = mod + "." + name
	}
}

// jsModule is a module's name without the node: prefix.
func jsModule(m string) string { return strings.TrimPrefix(m, "node:") }

// dotted reads a dotted name at t[i]: the name and the index after it.
func dotted(t []Token, i int) (string, int) {
	if i >= len(t) || t[i].Kind != Name {
		return "", i
	}
	var b strings.Builder
	b.WriteString(t[i].Text)
	j := i + 1
	for j+1 < len(t) && (t[j].Text == "." || t[j].Text == "?") && t[j+1].Kind == Name {
		b.WriteByte('.')
		b.WriteString(t[j+1].Text)
		j += 2
	}
	return b.String(), j
}

// resolve is a dotted name with its first part replaced by what an import
// bound it to.
func (a *analysis) resolve(name string) string {
	first, rest, ok := strings.Cut(name, ".")
	if m, found := a.alias[first]; found {
		if ok {
			return m + "." + rest
		}
		return m
	}
	return name
}

// callee reads the callee of a call at t[i] (a dotted name directly before
// an opening parenthesis): its name as written, the resolved name and the
// index of the parenthesis. ok is false when t[i] does not start a call.
func (a *analysis) callee(i int) (written, resolved string, open int, ok bool) {
	t := a.toks
	if t[i].Kind != Name || (i > 0 && (t[i-1].Text == "def" || t[i-1].Text == "function")) {
		return "", "", 0, false
	}
	if i > 0 && t[i-1].Text == "." {
		// a method of a call's or a subscript's result: Path(p).write_text(…)
		if i < 2 || (t[i-2].Text != ")" && t[i-2].Text != "]") || i+1 >= len(t) || t[i+1].Text != "(" {
			return "", "", 0, false
		}
		if i >= 5 && t[i-2].Text == ")" && t[i-3].Kind == String && t[i-4].Text == "(" &&
			(t[i-5].Text == "require" || t[i-5].Text == "__import__" || t[i-5].Text == "import_module") {
			// require('child_process').exec(…), __import__('os').system(…)
			mod := jsModule(unquote(t[i-3].Text))
			return t[i-5].Text + "(" + t[i-3].Text + ")." + t[i].Text, mod + "." + t[i].Text, i + 1, true
		}
		return "." + t[i].Text, "." + t[i].Text, i + 1, true
	}
	name, j := dotted(t, i)
	if j >= len(t) || t[j].Text != "(" {
		// a method call on a call's result: requests.get(u).text is not a call of text
		return "", "", 0, false
	}
	return name, a.resolve(name), j, true
}

// matchBrackets is, for each opening bracket of t, the index of the
// bracket closing it, or len(t) when none does.
func matchBrackets(t []Token) []int {
	match := make([]int, len(t))
	var stack []int
	for j, tk := range t {
		match[j] = len(t)
		if tk.Kind != Op {
			continue
		}
		switch tk.Text {
		case "(", "[", "{":
			stack = append(stack, j)
		case ")", "]", "}":
			if len(stack) > 0 {
				match[stack[len(stack)-1]] = j
				stack = stack[:len(stack)-1]
			}
		}
	}
	return match
}

// close is the index of the bracket closing the one at toks[open], or
// len(toks).
func (a *analysis) close(open int) int {
	if open >= len(a.toks) {
		return len(a.toks)
	}
	return a.match[open]
}

// argsLabel is the label of the arguments of the call whose parentheses
// are toks[open] and toks[end], computed once.
func (a *analysis) argsLabel(open, end int) (Label, string, int) {
	if m, ok := a.args[open]; ok {
		return m.label, m.src, m.line
	}
	l, src, line := a.label(open+1, end)
	a.args[open] = argLabel{l, src, line}
	a.argKeys = append(a.argKeys, open)
	return l, src, line
}

// exprEnd is the end of the expression starting at t[i]: a line end, a ;
// or a , outside its brackets, or a bracket closing one opened before it.
func exprEnd(t []Token, i int) int {
	depth := 0
	for j := i; j < len(t); j++ {
		if t[j].Kind == Newline && depth == 0 {
			return j
		}
		if t[j].Kind != Op {
			continue
		}
		switch t[j].Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth < 0 {
				return j
			}
		case ";":
			return j
		case ",":
			if depth == 0 {
				return j
			}
		}
	}
	return len(t)
}

var (
	secretPath  = lazyRE(`(?i)(?:^|[/\\~'"])\.(?:ssh|aws|gnupg|kube|docker|netrc|npmrc|pypirc|git-credentials)\b|(?:^|[/\\'"])\.env\b|id_(?:rsa|ed25519|ecdsa|dsa)\b|/etc/(?:shadow|passwd|sudoers)\b|Keychains?\b|login\.keychain|Local State|Login Data|Cookies\b|wallet\.dat`)
	persistPath = lazyRE(`(?:^|[/\\~'"])\.(?:bashrc|zshrc|profile|bash_profile|bash_login|zprofile|zshenv|zlogin)\b|config/fish/config\.fish|authorized_keys|/etc/cron|/var/spool/cron|\bcrontab\b|systemd/(?:system|user)/|LaunchAgents|LaunchDaemons|\.config/autostart|\.git/hooks/`)
	fieldName   = lazyRE(`\{\s*([A-Za-z_][\w.]*)`)
	homePath    = lazyRE(`^[rRbBuUfF]*['"` + "`" + `](?:~|\$HOME|\$\{HOME\}|%USERPROFILE%)`)
)

// secretWords and persistWords are lower-case strings one of which every
// match of secretPath and persistPath holds: a string with none is not
// matched against the patterns (a docstring of kilobytes costs a regular
// expression match otherwise).
var (
	secretWords  = []string{".ssh", ".aws", ".gnupg", ".kube", ".docker", ".netrc", ".npmrc", ".pypirc", ".git-credentials", ".env", "id_", "/etc/", "keychain", "local state", "login data", "cookies", "wallet.dat"}
	persistWords = []string{"bashrc", "zshrc", "profile", "bash_login", "zshenv", "zlogin", "config.fish", "authorized_keys", "cron", "systemd/", "launchagents", "launchdaemons", "autostart", "hooks/"}
)

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// pathLabels is the label each string or template token of t carries by
// the path it names; other tokens carry none. Each string is matched once,
// however many expressions it is part of.
func pathLabels(t []Token) []Label {
	out := make([]Label, len(t))
	for i, tk := range t {
		if tk.Kind != String && tk.Kind != Template {
			continue
		}
		var l Label
		lower := strings.ToLower(tk.Text)
		if containsAny(lower, secretWords) && secretPath().MatchString(tk.Text) {
			l |= SecretFile
		}
		if containsAny(lower, persistWords) && persistPath().MatchString(tk.Text) {
			l |= Persist
		}
		if homePath().MatchString(tk.Text) {
			l |= Home
		}
		out[i] = l
	}
	return out
}

// homeRoots are expressions that are exactly the home or the root
// directory, as written without blanks.
var homeRoots = map[string]bool{
	"os.path.expanduser('~')": true, `os.path.expanduser("~")`: true, "os.path.expanduser('~/')": true, `os.path.expanduser("~/")`: true,
	"Path.home()": true, "pathlib.Path.home()": true, "Path('~').expanduser()": true, `Path("~").expanduser()`: true,
	"os.homedir()": true, "os.environ['HOME']": true, `os.environ["HOME"]`: true, "os.getenv('HOME')": true, `os.getenv("HOME")`: true,
	"process.env.HOME": true, "process.env['HOME']": true, `process.env["HOME"]`: true,
	"'/'": true, `"/"`: true, "'~'": true, `"~"`: true, "'/*'": true, `"/*"`: true,
}

// label is what the tokens toks[from:to] carry: the sources they call, the
// names bound to sources they use and the paths they name. src names the
// first source found (a call or a bound name) and line is the line a bound
// name's source was on (0 for a call among the tokens).
func (a *analysis) label(from, to int) (l Label, src string, line int) {
	t := a.toks
	walk := false
	for i := from; i < to && i < len(t); i++ {
		tk := t[i]
		switch tk.Kind {
		case String, Template:
			if tk.Kind == String && strings.ContainsAny(tk.Text[:strings.IndexAny(tk.Text, `'"`)], "fF") {
				for _, m := range fieldName().FindAllStringSubmatch(tk.Text, -1) {
					if b, ok := a.lookup(m[1], false); ok {
						l |= b.label
						if src == "" {
							src, line = m[1], b.line
						}
					}
				}
			}
			l |= a.strings[i]
			continue
		case Name:
		default:
			continue
		}
		if i > 0 && t[i-1].Text == "." {
			switch tk.Text {
			case "rglob", "glob", "iterdir", "walk", "scandir", "listdir":
				walk = true
			}
			if _, r, open, ok := a.callee(i); ok && r[0] != '.' {
				l |= a.sourceOf(r, open, a.close(open))
			}
			continue
		}
		name, j := dotted(t, i)
		r := a.resolve(name)
		call := j < len(t) && t[j].Text == "("
		if b, ok := a.lookup(name, call); ok {
			if strings.Contains(name, ".") || (j < len(t) && t[j].Text == "[") {
				b.label &^= EnvAll // one variable of a copy of the environment: env['KEY'], env.TOKEN
			}
			l |= b.label
			if src == "" {
				src, line = name, b.line
			}
		}
		if call {
			end := a.close(j)
			if sl := a.sourceOf(r, j, end); sl != 0 {
				l |= sl
				if src == "" {
					src = name
				}
			}
			al, asrc, aline := a.argsLabel(j, end)
			l |= al
			if src == "" && asrc != "" {
				src, line = asrc, aline
			}
			if isWalk(r) {
				walk = true
			}
			if r == "os.path.expanduser" || r == "pathlib.Path.home" || r == "Path.home" || r == "os.homedir" || strings.HasSuffix(r, "Path.home") {
				l |= Home
			}
			l |= envAll(r, t, j)
			i = end
			continue
		}
		l |= envAll(r, t, j)
		if isWalk(r) {
			walk = true
		}
		if r == "os.path.expanduser" || r == "pathlib.Path.home" || r == "Path.home" || r == "os.homedir" || strings.HasSuffix(r, "Path.home") {
			l |= Home
		}
		if (r == "os.environ" || r == "os.getenv" || r == "process.env") && j+1 < len(t) && strings.Contains(t[j+1].Text, "HOME") {
			l |= Home
		}
		i = j - 1
	}
	if walk && l&Home != 0 {
		l |= HomeFiles
	}
	return l, src, line
}

// lookup is the binding of a name used in an expression: the whole dotted
// name, or its first part (s.fileno() uses s); a call of a bound name
// itself (f() where f = …) is not a use of its value.
func (a *analysis) lookup(name string, call bool) (binding, bool) {
	if b, ok := a.vars[name]; ok && !call {
		return b, true
	}
	first, _, dot := strings.Cut(name, ".")
	if !dot {
		return binding{}, false
	}
	b, ok := a.vars[first]
	return b, ok
}

// envAll is EnvAll when the name is the whole environment: os.environ or
// process.env not followed by one variable's name, subscript or get.
func envAll(r string, t []Token, j int) Label {
	switch r {
	case "os.environ", "process.env":
	case "os.environ.items", "os.environ.copy", "os.environ.keys", "os.environ.values", "process.env.entries":
		return EnvAll
	default:
		return 0
	}
	if j < len(t) && (t[j].Text == "[" || t[j].Text == ".") {
		return 0
	}
	return EnvAll
}

func isWalk(r string) bool {
	switch r {
	case "os.walk", "os.listdir", "os.scandir", "glob.glob", "glob.iglob", "fs.readdirSync", "fs.readdir", "fs.promises.readdir":
		return true
	}
	return false
}

// sourceOf is the label a call of r with arguments t[open+1:end] returns.
func (a *analysis) sourceOf(r string, open, end int) Label {
	t := a.toks
	switch r {
	case "base64.b64decode", "base64.b32decode", "base64.b16decode", "base64.b85decode", "base64.a85decode",
		"base64.urlsafe_b64decode", "base64.decodebytes", "base64.standard_b64decode", "bytes.fromhex", "bytearray.fromhex",
		"binascii.unhexlify", "binascii.a2b_base64", "binascii.a2b_hex", "zlib.decompress", "bz2.decompress",
		"lzma.decompress", "gzip.decompress", "marshal.loads", "atob":
		return Decoded
	case "String.fromCharCode", "String.fromCodePoint":
		return Decoded // a string built from a table of character codes
	case "codecs.decode", "Buffer.from":
		if r == "Buffer.from" && open+1 < end && t[open+1].Text == "[" {
			return Decoded // Buffer.from([104, 105, …])
		}
		for j := open + 1; j < end; j++ {
			if t[j].Kind == String {
				switch strings.ToLower(unquote(t[j].Text)) {
				case "rot13", "rot_13", "hex", "base64", "base_64", "zlib", "bz2", "base64url":
					return Decoded
				}
			}
		}
	case "requests.get", "requests.request", "requests.Session.get", "urllib.request.urlopen", "urllib2.urlopen", "urlopen",
		"httpx.get", "http.client.HTTPConnection", "http.client.HTTPSConnection", "fetch", "axios", "axios.get", "axios.request",
		"https.get", "http.get", "https.request", "http.request", "urllib.request.urlretrieve", "node-fetch", "got", "got.get":
		if r == "urllib.request.urlretrieve" {
			a.download(open, end)
		}
		return Network
	case "socket.socket", "socket.create_connection", "net.connect", "net.createConnection", "net.Socket", "tls.connect":
		return Socket
	}
	if strings.HasPrefix(r, "child_process.") || r == "subprocess.Popen" || r == "pty.spawn" {
		return Process
	}
	return 0
}

// download records the file urlretrieve(url, path) saves to.
func (a *analysis) download(open, end int) {
	args := splitArgs(a.toks, open, end)
	if len(args) < 2 {
		return
	}
	p := args[1]
	if p[1]-p[0] == 1 && a.toks[p[0]].Kind == String {
		a.downloads[unquote(a.toks[p[0]].Text)] = a.toks[p[0]].Line
	}
}

// splitArgs are the [from, to) ranges of the arguments of the call whose
// parentheses are t[open] and t[end].
func splitArgs(t []Token, open, end int) [][2]int {
	var out [][2]int
	from, depth := open+1, 0
	for j := open + 1; j < end; j++ {
		if t[j].Kind != Op {
			continue
		}
		switch t[j].Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ",":
			if depth == 0 {
				out = append(out, [2]int{from, j})
				from = j + 1
			}
		}
	}
	if from < end {
		out = append(out, [2]int{from, end})
	}
	return out
}

// keyword is the name of a keyword argument (name= or name:), or "".
func keyword(t []Token, arg [2]int) string {
	if arg[1]-arg[0] >= 2 && t[arg[0]].Kind == Name && (t[arg[0]+1].Text == "=" || t[arg[0]+1].Text == ":") {
		return t[arg[0]].Text
	}
	return ""
}

// assignment binds a name assigned at t[i]: NAME = expr, NAME += expr,
// const/let/var NAME = expr, for NAME in expr, with expr as NAME.
func (a *analysis) assignment(i int) {
	t := a.toks
	tk := t[i]
	if tk.Kind != Name || (i > 0 && t[i-1].Text == ".") {
		return
	}
	name, j := dotted(t, i)
	switch {
	case j+1 < len(t) && t[j].Text == "=" && t[j+1].Text != "=" && t[j+1].Text != ">" && (i == 0 || t[i-1].Text != "=" && t[i-1].Text != "!" && t[i-1].Text != "<" && t[i-1].Text != ">"):
		a.bind(name, j+1, exprEnd(t, j+1), false)
	case j+2 < len(t) && t[j+1].Text == "=" && (t[j].Text == "+" || t[j].Text == "|"):
		a.bind(name, j+2, exprEnd(t, j+2), true)
	case tk.Text == "for" && a.lang == Python:
		// for NAME[, NAME] in expr: each name carries expr's label
		var names []string
		k := i + 1
		for k < len(t) && t[k].Text != "in" && t[k].Kind != Newline {
			if t[k].Kind == Name {
				names = append(names, t[k].Text)
			}
			k++
		}
		if k < len(t) && t[k].Text == "in" {
			end := exprEnd(t, k+1)
			for e := k + 1; e < end; e++ {
				if t[e].Text == ":" && t[e].Kind == Op {
					end = e
					break
				}
			}
			for _, n := range names {
				a.bind(n, k+1, end, true)
			}
		}
	case tk.Text == "of" && a.lang == JavaScript && i > 0 && t[i-1].Kind == Name:
		a.bind(t[i-1].Text, i+1, exprEnd(t, i+1), true)
	case tk.Text == "as" && a.lang == Python && i+1 < len(t) && t[i+1].Kind == Name:
		// with EXPR as NAME: EXPR runs back to with or a comma
		k := i - 1
		depth := 0
		for k >= 0 && t[k].Kind != Newline {
			if t[k].Kind == Op && (t[k].Text == ")" || t[k].Text == "]") {
				depth++
			} else if t[k].Kind == Op && (t[k].Text == "(" || t[k].Text == "[") {
				depth--
			}
			if depth == 0 && (t[k].Text == "with" || t[k].Text == ",") {
				break
			}
			k--
		}
		a.bind(t[i+1].Text, k+1, i, false)
	}
}

// bind gives name the label of t[from:to].
func (a *analysis) bind(name string, from, to int, keep bool) {
	if from >= to {
		return
	}
	l, src, line := a.label(from, to)
	b := binding{label: l, line: a.toks[from].Line, source: src, homeRoot: a.isHomeRoot(from, to)}
	if src != "" && line != 0 {
		b.line = line
	}
	if keep {
		old := a.vars[name]
		b.label |= old.label
	}
	if b.label == 0 && !b.homeRoot {
		delete(a.vars, name)
		return
	}
	a.vars[name] = b
}

// isHomeRoot reports whether t[from:to] is exactly the home or the root
// directory, or a name bound to one.
func (a *analysis) isHomeRoot(from, to int) bool {
	var b strings.Builder
	for _, tk := range a.toks[from:to] {
		b.WriteString(tk.Text)
	}
	s := b.String()
	if homeRoots[s] {
		return true
	}
	if to-from == 1 && a.toks[from].Kind == Name {
		return a.vars[s].homeRoot
	}
	return false
}

func unquote(s string) string {
	s = strings.TrimLeft(s, "rRbBuUfF")
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	if len(s) >= 2 {
		return s[1 : len(s)-1]
	}
	return s
}

// maxRelabels bounds the calls of one file whose callbacks' calls are
// labelled again (callbackParams): each costs a pass over the calls
// inside it, so nested callbacks would cost their depth times the file.
const maxRelabels = 16

// callbackParams binds, in JavaScript, the parameters of the callbacks a
// call is given to what the call carries: the callee's source
// (https.get(u, res => …): res is the download) or the label of the object
// whose method it is (res.on('data', c => …): c is a chunk of it). Then
// body += c carries the download to the sink that runs body. It reports
// whether it bound a parameter.
func (a *analysis) callbackParams(i int) bool {
	written, r, open, ok := a.callee(i)
	if !ok || written == "" || written[0] == '.' {
		return false
	}
	end := a.close(open)
	l := a.sourceOf(r, open, end) & (Network | Decoded)
	line := a.toks[i].Line
	if first, _, dot := strings.Cut(written, "."); dot {
		if b, ok := a.vars[first]; ok {
			l |= b.label & (Network | Decoded)
			line = b.line
		}
	}
	if l == 0 {
		return false
	}
	bound := false
	t := a.toks
	arrow := func(k int) bool { return k+1 < end && t[k].Text == "=" && t[k+1].Text == ">" } // the tokenizer's operators are single characters
	for j := open + 1; j < end; j++ {
		name := ""
		switch {
		case t[j].Kind == Name && arrow(j+1):
			name = t[j].Text // c => …
		case t[j].Text == "(" && j+2 < end && t[j+1].Kind == Name && (t[j+2].Text == ")" || t[j+2].Text == ","):
			if k := a.close(j); arrow(k + 1) {
				name = t[j+1].Text // (c) => …, (res, x) => …
			}
		case t[j].Text == "function" && j+2 < end:
			k := j + 1
			if t[k].Kind == Name {
				k++
			}
			if k+1 < end && t[k].Text == "(" && t[k+1].Kind == Name {
				name = t[k+1].Text // function (c) { … }
			}
		}
		if name != "" {
			a.vars[name] = binding{label: l, line: line, source: written}
			bound = true
		}
	}
	return bound
}
