package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// hashArgsJCS is HashArgs as it was, through jcs alone: the definition the
// fast path must agree with, byte for byte and error for error.
func hashArgsJCS(args json.RawMessage) (string, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	canon, err := jcs.Transform(args)
	if err != nil {
		return "", fmt.Errorf("audit: hash arguments: %w", err)
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// checkArgs compares canonicalArgs and HashArgs with jcs on in, and
// reports whether the fast path wrote the canonical form.
func checkArgs(t testing.TB, in []byte) (fast bool) {
	t.Helper()
	want, werr := jcs.Transform(in)
	c, got, fast, err := canonicalArgs(in)
	defer c.release()
	switch {
	case werr != nil && err == nil:
		t.Fatalf("%q: jcs rejects it (%v) but got %q (fast %v)", in, werr, got, fast)
	case werr != nil && err.Error() != werr.Error():
		t.Fatalf("%q: error %q, jcs %q", in, err, werr)
	case werr == nil && err != nil:
		t.Fatalf("%q: error %v, jcs gives %q", in, err, want)
	case !bytes.Equal(got, want):
		t.Fatalf("%q (fast %v):\n got %q\nwant %q", in, fast, got, want)
	}
	h, herr := HashArgs(in)
	wh, wherr := hashArgsJCS(in)
	if h != wh || fmt.Sprint(herr) != fmt.Sprint(wherr) {
		t.Fatalf("%q: HashArgs %q %v, jcs %q %v", in, h, herr, wh, wherr)
	}
	return fast
}

func nested(open, mid, close string, n int) string {
	return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
}

// argsCases are inputs with their exact canonical form ("" for an error),
// and whether jcs, not the fast path, is expected to write it.
var argsCases = []struct {
	name, in, want string
	slow           bool
}{
	// Structure and whitespace.
	{"empty object", `{}`, `{}`, false},
	{"empty array", `[]`, `[]`, false},
	{"empty containers spaced", " { } ", `{}`, false},
	{"empty array spaced", "[\n]", `[]`, false},
	{"whitespace everywhere", "\t\n\r {\n\"b\" :\t[ 1 ,\r\n2 , { } , [ ] ] , \"a\"  :  \"x\" }\n ", `{"a":"x","b":[1,2,{},[]]}`, false},
	{"top-level number", " 42 ", `42`, false},
	{"top-level string", `"s"`, `"s"`, false},
	{"top-level literals", `[true,false,null]`, `[true,false,null]`, false},
	{"nested", `{"z":{"y":{"b":2,"a":1},"x":[{"d":4,"c":3}]},"a":null}`, `{"a":null,"z":{"x":[{"c":3,"d":4}],"y":{"a":1,"b":2}}}`, false},
	{"sorted already", `{"a":1,"b":{"c":2,"d":3}}`, `{"a":1,"b":{"c":2,"d":3}}`, false},
	{"reverse order", `{"e":5,"d":4,"c":3,"b":2,"a":1}`, `{"a":1,"b":2,"c":3,"d":4,"e":5}`, false},
	{"prefix keys", `{"ab":1,"a":2,"":3,"b":4}`, `{"":3,"a":2,"ab":1,"b":4}`, false},
	{"deep 500", nested(`{"k":[`, `1`, `]}`, 250), nested(`{"k":[`, `1`, `]}`, 250), false},
	{"deep 2000", nested(`[`, ``, `]`, 2000), nested(`[`, ``, `]`, 2000), true},
	{"deep 10000", nested(`[`, `0`, `]`, 10000), nested(`[`, `0`, `]`, 10000), true},
	{"too deep", nested(`[`, ``, `]`, 10001), "", true},

	// Key order: UTF-16 code units.
	{"non-ascii keys", `{"é":1,"z":2,"a":3,"日":4,"ÿ":5}`, `{"a":3,"z":2,"é":1,"ÿ":5,"日":4}`, false},
	{"supplementary keys", `{"😀":1,"ﬁ":2,"퟿":3,"a":4}`, `{"a":4,"퟿":3,"😀":1,"ﬁ":2}`, false},
	{"supplementary vs private use", `{"\ue000":1,"\ud800\udc00":2,"\uffff":3,"\ud7ff":4}`, "{\"\ud7ff\":4,\"\U00010000\":2,\"\ue000\":1,\"\uffff\":3}", false},
	{"supplementary shared prefix", `{"a😀b":1,"a😀":2,"a😁":3,"a😀a":4}`, `{"a😀":2,"a😀a":4,"a😀b":1,"a😁":3}`, false},
	{"rfc 8785 sorting example", `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
		"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}", false},
	{"escaped keys", `{"\"":1,"\\":2,"\n":3,"\u0000":4,"\/":5," ":6}`, `{"\u0000":4,"\n":3," ":6,"\"":1,"/":5,"\\":2}`, false},
	{"escaped key order", `{"a\tb":1,"a b":2,"a\u0001":3}`, `{"a\u0001":3,"a\tb":1,"a b":2}`, false},

	// Duplicate keys: jcs rejects them.
	{"duplicate", `{"a":1,"a":2}`, "", true},
	{"duplicate escaped", `{"a":1,"\u0061":2}`, "", true},
	{"duplicate unsorted", `{"b":1,"a":2,"b":3}`, "", true},
	{"duplicate nested", `{"x":[{"k":1,"k":1}]}`, "", true},
	{"duplicate supplementary", `{"😀":1,"\ud83d\ude00":2}`, "", true},
	{"duplicate empty", `{"":1,"":2}`, "", true},

	// Strings.
	{"short escapes", `"\" \\ \/ / \b \f \n \r \t"`, `"\" \\ / / \b \f \n \r \t"`, false},
	{"control escapes", `"\u0000\u0001\u001f\u007f\u0020\u001F"`, "\"\\u0000\\u0001\\u001f\x7f \\u001f\"", false},
	{"named controls via u", `"\u000a\u0008\u000c\u000d\u0009"`, `"\n\b\f\r\t"`, false},
	{"quote backslash slash via u", `"\u0022\u005c\u002f\u005C"`, `"\"\\/\\"`, false},
	{"line separators", `"\u2028\u2029 ` + "\u2028\u2029" + `"`, "\"\u2028\u2029 \u2028\u2029\"", false},
	{"u escapes", `"\u00e9\u00E9\u65e5\uFFFD\uffff"`, "\"éé日\ufffd\uffff\"", false},
	{"surrogate pair", `"\ud83d\ude00\uD83D\uDE00\udbff\udfff"`, "\"😀😀\U0010ffff\"", false},
	{"raw non-ascii", "\"é日😀\x7f\ufffd<>&'\"", "\"é日😀\x7f\ufffd<>&'\"", false},
	{"html and slash", `"</script>&amp;"`, `"</script>&amp;"`, false},
	{"lone high surrogate", `"\ud800"`, "", true},
	{"lone low surrogate", `"\udc00"`, "", true},
	{"high then letter", `"\ud800\u0041"`, "", true},
	{"high then raw", `"\ud800x"`, "", true},
	{"high high", `"\ud83d\ud83d"`, "", true},
	{"high then short escape", `"\ud83d\n"`, "", true},
	{"unknown escape", `"\x"`, "", true},
	{"single quote escape", `"\'"`, "", true},
	{"short u", `"\u12"`, "", true},
	{"bad hex", `"\u12g4"`, "", true},
	{"signed hex", `"\u+123"`, "", true},
	{"raw tab", "\"a\tb\"", "", true},
	{"raw newline", "\"a\nb\"", "", true},
	{"raw nul", "\"a\x00b\"", "", true},
	{"invalid utf-8", "\"\xff\"", "", true},
	{"truncated utf-8", "\"\xc3\"", "", true},
	{"overlong utf-8", "\"\xc0\xaf\"", "", true},
	{"utf-8 surrogate", "\"\xed\xa0\x80\"", "", true},
	{"beyond U+10FFFF", "\"\xf4\x90\x80\x80\"", "", true},
	{"unterminated", `"abc`, "", true},
	{"unterminated escape", `"abc\`, "", true},

	// Numbers: ECMAScript's formatting of doubles.
	{"integers", `[0,-0,1,-1,10,123456789012345,9007199254740992,-9007199254740992]`, `[0,0,1,-1,10,123456789012345,9007199254740992,-9007199254740992]`, false},
	{"big integers", `[9007199254740993,-9007199254740993,9999999999999999,12345678901234567890,100000000000000000000,1000000000000000000000]`,
		`[9007199254740992,-9007199254740992,10000000000000000,12345678901234567000,100000000000000000000,1e+21]`, false},
	{"exponents", `[1e21,1E21,1e20,1E-7,1e-7,1e-6,1e+0,2.5E+10,1e-400,-1e-400]`, `[1e+21,1e+21,100000000000000000000,1e-7,1e-7,0.000001,1,25000000000,0,0]`, false},
	{"fractions", `[0.1,1.0,-0.0,1.5e3,123.456e-2,100e-2,0.000001,0.0000001,3.141592653589793238]`, `[0.1,1,0,1500,1.23456,1,0.000001,1e-7,3.141592653589793]`, false},
	{"extremes", `[5e-324,1.7976931348623157e308,-1.7976931348623157e308,2.2250738585072014e-308]`, `[5e-324,1.7976931348623157e+308,-1.7976931348623157e+308,2.2250738585072014e-308]`, false},
	{"rfc 8785 numbers", `[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001]`, `[333333333.3333333,1e+30,4.5,0.002,1e-27]`, false},
	{"overflow", `[1e400]`, "", true},
	{"negative overflow", `[-1e400]`, "", true},
	{"leading zero", `[01]`, "", true},
	{"negative leading zero", `[-01]`, "", true},
	{"bare minus", `[-]`, "", true},
	{"trailing dot", `[1.]`, "", true},
	{"leading dot", `[.5]`, "", true},
	{"plus sign", `[+1]`, "", true},
	{"bare exponent", `[1e]`, "", true},
	{"signed bare exponent", `[1e+]`, "", true},
	{"hex", `[0x10]`, "", true},
	{"underscore", `[1_000]`, "", true},
	{"NaN", `[NaN]`, "", true},
	{"Infinity", `[Infinity]`, "", true},
	{"spaced minus", `[- 1]`, "", true},
	{"number then string", `[1"a"]`, "", true},
	{"two dots", `[1.2.3]`, "", true},

	// Literals.
	{"short literal", `[tru]`, "", true},
	{"capital literal", `[True]`, "", true},
	{"literal suffix", `[truex]`, "", true},
	{"literal run", `[true false]`, "", true},
	{"nul", `nul`, "", true},

	// Invalid structure.
	{"empty", ``, "", true},
	{"only space", "  ", "", true},
	{"truncated member", `{"a":`, "", true},
	{"missing colon", `{"a" 1}`, "", true},
	{"bare key", `{a:1}`, "", true},
	{"number key", `{1:2}`, "", true},
	{"trailing comma object", `{"a":1,}`, "", true},
	{"trailing comma array", `[1,]`, "", true},
	{"lone comma array", `[,]`, "", true},
	{"lone comma object", `{,}`, "", true},
	{"leading comma", `[,1]`, "", true},
	{"missing comma array", `[1 2]`, "", true},
	{"missing comma object", `{"a":1 "b":2}`, "", true},
	{"key without value", `{"a":1,"b"}`, "", true},
	{"close brace", `}`, "", true},
	{"close bracket", `]`, "", true},
	{"mismatched", `[1}`, "", true},
	{"mismatched object", `{"a":1]`, "", true},
	{"trailing garbage", `{"a":1}x`, "", true},
	{"two values", `{"a":1}{}`, "", true},
	{"extra close", `[1]]`, "", true},
	{"single quotes", `'a'`, "", true},
	{"unclosed array", `["a",`, "", true},
	{"unclosed object", `{"a":1`, "", true},
	{"form feed space", "\f{}", "", true},
	{"vertical tab space", "{}\v", "", true},
	{"nbsp space", "{\u00a0}", "", true},
	{"byte order mark", "\ufeff{}", "", true},
	{"nul after", "{}\x00", "", true},
	{"comment", `{} // x`, "", true},
}

func TestCanonicalArgsCases(t *testing.T) {
	for _, tc := range argsCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			want, werr := jcs.Transform(in)
			if tc.want == "" && werr == nil {
				t.Fatalf("jcs accepts it: %q", want)
			}
			if tc.want != "" && (werr != nil || string(want) != tc.want) {
				t.Fatalf("the table disagrees with jcs: %q %v", want, werr)
			}
			fast := checkArgs(t, in)
			if tc.want != "" && fast == tc.slow {
				t.Errorf("fast path %v, want %v", fast, !tc.slow)
			}
		})
	}
}

func TestHashArgsUnchanged(t *testing.T) {
	// Hashes already in audit logs: these must never change.
	for in, want := range map[string]string{
		``:   "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
		`{}`: "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
		`{"path": "/tmp/x", "n": 1.0, "z": [true, null]}`: "sha256:37a22572aa5f70939f32e37b9cb5aefefd599b65178f055ee3e4aba78b52b291",
	} {
		got, err := HashArgs(json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%q: %s, want %s", in, got, want)
		}
	}
}

// The pooled state is not shared between concurrent calls.
func TestHashArgsConcurrent(t *testing.T) {
	inputs := [][]byte{benchArgs(10<<10, notesLine), mixedArgs(), []byte(`{"b":[1,2,{"d":1,"c":2}],"a":"x"}`), []byte(`{"a":1,"a":2}`)}
	want := make([]string, len(inputs))
	for i, in := range inputs {
		want[i], _ = hashArgsJCS(in)
	}
	done := make(chan error)
	for g := range 8 {
		go func() {
			for k := range 200 {
				i := (g + k) % len(inputs)
				if got, _ := HashArgs(inputs[i]); got != want[i] {
					done <- fmt.Errorf("input %d: %s, want %s", i, got, want[i])
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// A budget on reordering bytes sends deeply nested unsorted objects to jcs.
func TestCanonicalArgsReorderBudget(t *testing.T) {
	in := []byte(nested(`{"b":1,"a":`, `"`+strings.Repeat("x", 1000)+`"`, `}`, 200))
	if checkArgs(t, in) {
		t.Fatal("copied the body 200 times on the fast path")
	}
	if !checkArgs(t, []byte(nested(`{"b":1,"a":`, `"`+strings.Repeat("x", 1000)+`"`, `}`, 5))) {
		t.Fatal("5 levels of unsorted objects went to jcs")
	}
}

func TestAppendNumberMatchesJCS(t *testing.T) {
	check := func(f float64) {
		t.Helper()
		want, err := jcs.NumberToJSON(f)
		if err != nil {
			return
		}
		if got := string(appendNumber([]byte("x"), f)); got != "x"+want {
			t.Fatalf("%v (%#x): %q, jcs %q", f, math.Float64bits(f), got[1:], want)
		}
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e21, math.Nextafter(1e21, 0), 1e-6, math.Nextafter(1e-6, 0),
		1e-7, 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e100, 1e-100, 123e-20, 1 << 53, 1<<53 + 2,
		999999999999999999999, 1e20, 1e9, 1e-9, 1.5e300, 2.2250738585072014e-308} {
		check(f)
		check(-f)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		check(math.Float64frombits(rng.Uint64()))
		check(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(60)-30)))
	}
}

func TestCompareUTF16(t *testing.T) {
	keys := []string{"", "\x00", "a", "ab", "a\u0080", "\u00e9", "\u07ff", "\u0800", "\ud7ff", "\U00010000", "\U00010000a", "\U0001f600", "\U0010ffff", "\ue000", "\ufb01", "\uffff", "\uffffa"}
	for i, a := range keys {
		for j, b := range keys {
			if got := compareUTF16([]byte(a), []byte(b)); sign(got) != sign(i-j) {
				t.Errorf("compareUTF16(%q, %q) = %d", a, b, got)
			}
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// argsGen writes random JSON, mostly valid, in varied spacing and with
// every kind of escape and number.
type argsGen struct {
	rng *rand.Rand
	b   []byte
}

func (g *argsGen) pick(options ...string) string { return options[g.rng.IntN(len(options))] }

func (g *argsGen) space() {
	if g.rng.IntN(3) == 0 {
		g.b = append(g.b, g.pick(" ", "\n", "\t", "\r\n  ", "  ")...)
	}
}

func (g *argsGen) value(depth int) {
	g.space()
	n := 9
	if depth > 5 {
		n = 6 // scalars only
	}
	switch g.rng.IntN(n) {
	case 0, 1:
		g.str(false)
	case 2, 3:
		g.number()
	case 4:
		g.b = append(g.b, g.pick("true", "false", "null")...)
	case 5:
		g.str(true)
	case 6:
		g.b = append(g.b, '[')
		for i := range g.rng.IntN(5) {
			if i > 0 {
				g.space()
				g.b = append(g.b, ',')
			}
			g.value(depth + 1)
		}
		g.space()
		g.b = append(g.b, ']')
	default:
		g.b = append(g.b, '{')
		for i := range g.rng.IntN(7) {
			if i > 0 {
				g.space()
				g.b = append(g.b, ',')
			}
			g.space()
			g.key()
			g.space()
			g.b = append(g.b, ':')
			g.value(depth + 1)
		}
		g.space()
		g.b = append(g.b, '}')
	}
	g.space()
}

// key writes a short key from a small alphabet, so keys share prefixes,
// straddle the UTF-16 order quirks and sometimes repeat.
func (g *argsGen) key() {
	g.b = append(g.b, '"')
	for range g.rng.IntN(4) {
		g.b = append(g.b, g.pick("a", "b", "é", "\ue000", "\U0001f600", `\ud83d\ude00`, "\ufb01", `\n`, `\"`, `\u0061`, `\/`, "\x7f", "ab", "日")...)
	}
	g.b = append(g.b, '"')
}

func (g *argsGen) str(long bool) {
	n := g.rng.IntN(12)
	if long {
		n = 20 + g.rng.IntN(300)
	}
	g.b = append(g.b, '"')
	for range n {
		switch r := g.rng.IntN(40); {
		case r < 20:
			const ascii = "abcdefghijklmnopqrstuvwxyz ABC 0123456789/<>&'.,:;{}[]"
			g.b = append(g.b, ascii[g.rng.IntN(len(ascii))])
		case r < 25:
			g.b = append(g.b, g.pick(`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`)...)
		case r < 30:
			g.b = append(g.b, g.pick("é", "日本", "😀", "\u2028", "\u2029", "\x7f", "\ufffd", "\u0080", "\U0010ffff")...)
		case r < 35:
			cp := []rune{0, 1, 0x1f, 0x20, '"', '\\', '/', 0x7f, 0x80, 0xe9, 0x2028, 0xfeff, 0xffff, 0xd7ff, 0xe000}[g.rng.IntN(15)]
			if g.rng.IntN(2) == 0 {
				cp = rune(g.rng.IntN(0xd800))
			}
			f := "\\u%04x"
			if g.rng.IntN(2) == 0 {
				f = "\\u%04X"
			}
			g.b = fmt.Appendf(g.b, f, cp)
		case r < 38:
			cp := 0x10000 + rune(g.rng.IntN(0x100000))
			hi, lo := 0xd800+(cp-0x10000)>>10, 0xdc00+(cp-0x10000)&0x3ff
			g.b = fmt.Appendf(g.b, `\u%04x\u%04X`, hi, lo)
		case r < 39:
			g.b = append(g.b, g.pick("\x01", "\t", `\ud800`, `\udc00x`, "\xff", "\xe6\x97", `\u12`, `\q`)...) // invalid
		default:
			g.b = utf8.AppendRune(g.b, rune(0x80+g.rng.IntN(0x800)))
		}
	}
	g.b = append(g.b, '"')
}

func (g *argsGen) number() {
	switch g.rng.IntN(10) {
	case 0:
		g.b = strconv.AppendInt(g.b, g.rng.Int64N(2000)-1000, 10)
	case 1:
		g.b = strconv.AppendInt(g.b, g.rng.Int64N(1<<54)-1<<53, 10)
	case 2:
		g.b = strconv.AppendInt(g.b, g.rng.Int64(), 10)
	case 3:
		g.b = strconv.AppendUint(g.b, g.rng.Uint64(), 10)
	case 4:
		g.b = strconv.AppendFloat(g.b, g.rng.NormFloat64()*1e6, 'f', -1, 64)
	case 5:
		g.b = strconv.AppendFloat(g.b, g.rng.NormFloat64()*float64(g.rng.IntN(1e6)), byte(g.pick("e", "E", "g")[0]), g.rng.IntN(20)-1, 64)
	case 6:
		g.b = append(g.b, g.pick("-0", "0", "-0.0", "1e21", "1E-7", "0.1", "1e400", "5e-324", "1e-400", "9007199254740993", "01", "1.", "-")...)
	default: // digits, fraction, exponent
		if g.rng.IntN(2) == 0 {
			g.b = append(g.b, '-')
		}
		g.b = append(g.b, byte('1'+g.rng.IntN(9)))
		for range g.rng.IntN(25) {
			g.b = append(g.b, byte('0'+g.rng.IntN(10)))
		}
		if g.rng.IntN(2) == 0 {
			g.b = append(g.b, '.')
			for range 1 + g.rng.IntN(20) {
				g.b = append(g.b, byte('0'+g.rng.IntN(10)))
			}
		}
		if g.rng.IntN(2) == 0 {
			g.b = append(g.b, g.pick("e", "E", "e+", "e-", "E-")...)
			g.b = strconv.AppendInt(g.b, int64(g.rng.IntN(330)), 10)
		}
	}
}

// mutate damages a document: a byte changed, dropped or inserted, or the
// end cut off.
func (g *argsGen) mutate() {
	if len(g.b) == 0 {
		return
	}
	const damage = "{}[]\",:\\ 0-.eaé"
	i := g.rng.IntN(len(g.b))
	switch g.rng.IntN(4) {
	case 0:
		g.b[i] = damage[g.rng.IntN(len(damage))]
	case 1:
		g.b = append(g.b[:i], g.b[i+1:]...)
	case 2:
		g.b = append(g.b[:i], append([]byte{damage[g.rng.IntN(len(damage))]}, g.b[i:]...)...)
	default:
		g.b = g.b[:i]
	}
}

func TestCanonicalArgsRandom(t *testing.T) {
	g := &argsGen{rng: rand.New(rand.NewPCG(8785, 1))}
	var fast, valid, total int
	for range 20000 {
		g.b = g.b[:0]
		g.value(0)
		if g.rng.IntN(8) == 0 {
			g.mutate()
		}
		total++
		if _, err := jcs.Transform(g.b); err == nil {
			valid++
		}
		if checkArgs(t, g.b) {
			fast++
		}
	}
	t.Logf("%d documents, %d valid, %d on the fast path", total, valid, fast)
	if valid < total/3 || fast < valid*9/10 {
		t.Fatalf("%d documents, %d valid, only %d on the fast path", total, valid, fast)
	}
}

func FuzzHashArgs(f *testing.F) {
	for _, tc := range argsCases {
		if len(tc.in) < 1000 {
			f.Add([]byte(tc.in))
		}
	}
	f.Add([]byte(`{"path":"/srv/notes/a.md","content":"# Notes\n\"quoted\" text\n"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		want, werr := hashArgsJCS(in)
		got, err := HashArgs(in)
		if werr != nil {
			if err == nil || err.Error() != werr.Error() {
				t.Fatalf("%q: jcs rejects it (%v), HashArgs gives %q %v", in, werr, got, err)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("%q: HashArgs %q %v, jcs %q", in, got, err, want)
		}
		if len(in) > 0 {
			checkArgs(t, in)
		}
	})
}

// benchArgs is a file-writing call's arguments, n bytes long or a little
// more: a path and text as encoding/json writes it (non-ASCII literal,
// escaped newlines and quotes). line makes the text's lines.
func benchArgs(n int, line func(i int) string) []byte {
	if n <= 16 {
		return []byte(`{"p":"/a"}`) // 10 bytes
	}
	var text []byte
	for i := 0; len(text) < n; i++ {
		text = append(text, line(i)...)
	}
	for {
		b, err := json.Marshal(map[string]string{"path": "/srv/notes/a.md", "content": string(text)})
		if err != nil {
			panic(err)
		}
		if len(b) <= n || len(text) == 0 {
			return b
		}
		cut := len(text) - (len(b)-n+1)/2
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
}

// notesLine is a line of meeting notes: prose with newlines, the odd pair
// of quotes, the odd non-ASCII letter.
func notesLine(i int) string {
	return fmt.Sprintf("## Meeting %d\n\nAlice said \"ship it\" once the tests pass; Bob asked about the café budget.\n- [ ] review /srv/notes/todo-%d.md before Friday\n\n", i, i)
}

// denseLine is text escaped as densely as ordinary JSON gets: quotes, tabs
// and newlines, and with asciiArgs every non-ASCII character as \uXXXX
// (as Python's json.dumps writes it).
func denseLine(i int) string {
	return fmt.Sprintf("Line %d:\tthe \"quick\" brown fox \u2014 naïve café \U0001f600 jumps over the \"lazy\" dog\n", i)
}

// cjkLine is Japanese prose.
func cjkLine(int) string {
	return "日本語のテキスト、これは「テスト」です。改行もあります。\n"
}

// asciiArgs rewrites JSON with every non-ASCII character escaped as
// \uXXXX (surrogate pairs beyond U+FFFF).
func asciiArgs(b []byte) []byte {
	var out []byte
	for _, r := range string(b) {
		switch {
		case r < utf8.RuneSelf:
			out = append(out, byte(r))
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return out
}

// mixedArgs is a structured call's arguments, about 1 KB: unsorted keys,
// nested objects, integers and fractions.
func mixedArgs() []byte {
	var b bytes.Buffer
	b.WriteString(`{"query": "status:open label:bug", "limit": 50, "offset": 0, "options": {"timeout": 1.5, "recursive": true, "depth": 3}, "filters": [`)
	for i := range 8 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"owner": "user%d", "since": "2026-01-%02dT00:00:00Z", "tags": ["a", "b%d"], "score": %d.25, "id": %d}`, i, i+1, i, i, 1000000+i)
	}
	b.WriteString(`], "dry_run": false}`)
	return b.Bytes()
}

func BenchmarkHashArgs(b *testing.B) {
	inputs := []struct {
		name string
		args []byte
	}{
		{"10B", benchArgs(10, nil)},
		{"1KB", benchArgs(1<<10, notesLine)},
		{"10KB", benchArgs(10<<10, notesLine)},
		{"100KB", benchArgs(100<<10, notesLine)},
		{"mixed1KB", mixedArgs()},
		{"dense100KB", asciiArgs(benchArgs(100<<10, denseLine))},
		{"cjk100KB", benchArgs(100<<10, cjkLine)},
	}
	impls := []struct {
		name string
		fn   func(json.RawMessage) (string, error)
	}{
		{"new", HashArgs},
		{"jcs", hashArgsJCS},
	}
	for _, in := range inputs {
		if !checkArgs(b, in.args) {
			b.Fatalf("%s is not on the fast path", in.name)
		}
		for _, impl := range impls {
			b.Run(in.name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.args)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := impl.fn(in.args); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
