package signature

import (
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// FuzzReaderAgreesWithStrictJSON holds the one-pass reader of envelopes to
// strictjson's rules: an envelope it accepts, strictjson.Decode accepts
// too, with the same values. (The reader is stricter in one way: it
// refuses null where a string, an object or an array is expected.)
func FuzzReaderAgreesWithStrictJSON(f *testing.F) {
	for _, s := range []string{
		`{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"keyid":"k","sig":"c2ln"}]}`,
		` {"payload":"a\"b\\c\u00e9\ud83d\ude00","signatures":[]} `,
		`{"payloadType":"x","payloadType":"y"}`,
		`{"PayloadType":"x"}`,
		`{"payload":"x"}{}`,
		`{"signatures":[{"keyid":"a","sig":"b","extra":1}]}`,
		`{"payload":"\ud800"}`,
		"{\"payload\":\"\xff\"}",
		`{"payload":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := readEnvelope(data)
		if err != nil {
			return
		}
		var want envelope
		if err := strictjson.Decode(data, &want, 8); err != nil {
			t.Fatalf("the reader accepted what strictjson refuses (%v): %q", err, data)
		}
		if len(want.Signatures) == 0 {
			want.Signatures = nil
		}
		if len(got.Signatures) == 0 {
			got.Signatures = nil
		}
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("the reader read %+v, strictjson %+v, from %q", *got, want, data)
		}
	})
}
