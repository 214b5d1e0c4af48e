package mcpclient

import "testing"

func TestJSONDepth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{`1`, 0},
		{`{}`, 1},
		{`{"a":[1,{"b":[]}]}`, 4},
		{`{"a":"{{[[\"]]}}"}`, 1},  // brackets and escaped quotes inside strings
		{`{"a":"\\","b":[[]]}`, 3}, // an escaped backslash ends the escape
		{`[[[[[[[[[[]]]]]]]]]]`, 10},
	}
	for _, tc := range tests {
		if got := jsonDepth([]byte(tc.in)); got != tc.want {
			t.Errorf("jsonDepth(%s) = %d; want %d", tc.in, got, tc.want)
		}
	}
}
