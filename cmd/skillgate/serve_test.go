package main

import "testing"

// TestServeLimitFlags: a negative connection bound, or a --public-url that
// is not a scheme and host, is a usage error naming the flag, before
// anything is opened.
func TestServeLimitFlags(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"--idle-timeout", "-1s"}, "Error: --idle-timeout must not be negative (0 turns it off)\n"},
		{[]string{"--body-timeout", "-1ms"}, "Error: --body-timeout must not be negative (0 turns it off)\n"},
		{[]string{"--write-timeout", "-1m"}, "Error: --write-timeout must not be negative (0 turns it off)\n"},
		{[]string{"--header-timeout", "-1s"}, "Error: --header-timeout must not be negative (0 turns it off)\n"},
		{[]string{"--stream-ping", "-1s"}, "Error: --stream-ping must not be negative (0 turns it off)\n"},
		{[]string{"--max-client-conns", "-1"}, "Error: --max-client-conns must not be negative (0: no limit)\n"},
		{[]string{"--public-url", "ftp://gw.example.com"}, "Error: --public-url \"ftp://gw.example.com\": want the scheme and host clients reach the server at, such as https://gw.example.com\n"},
		{[]string{"--public-url", "https://gw.example.com/mcp"}, "Error: --public-url \"https://gw.example.com/mcp\": want the scheme and host clients reach the server at, such as https://gw.example.com\n"},
		{[]string{"--public-url", "gw.example.com"}, "Error: --public-url \"gw.example.com\": want the scheme and host clients reach the server at, such as https://gw.example.com\n"},
	} {
		code, _, stderr := run(t, t.TempDir(), append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
		if code != 2 || stderr != tc.stderr {
			t.Errorf("%v: exit %d, stderr %q; want 2, %q", tc.args, code, stderr, tc.stderr)
		}
	}
}
