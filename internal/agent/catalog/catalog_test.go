package catalog_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/agent/catalog"
)

func TestXML(t *testing.T) {
	if got := catalog.XML(nil); got != "<available_skills>\n</available_skills>" {
		t.Errorf("empty: %q", got)
	}
	got := catalog.XML([]catalog.Item{{Name: "a&b", Description: `say "hi" <now> it's`, Location: "/x/a&b/SKILL.md"}})
	want := "<available_skills>\n<skill>\n<name>\na&amp;b\n</name>\n<description>\nsay &quot;hi&quot; &lt;now&gt; it&#x27;s\n</description>\n<location>\n/x/a&b/SKILL.md\n</location>\n</skill>\n</available_skills>"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func items(n, descLen int) []catalog.Item {
	var out []catalog.Item
	for i := 0; i < n; i++ {
		out = append(out, catalog.Item{Name: "skill-" + string(rune('a'+i)), Description: strings.Repeat("word ", descLen/5), Location: "/s/SKILL.md"})
	}
	return out
}

func TestBudget(t *testing.T) {
	full := catalog.XML(items(5, 400))
	tests := []struct {
		name          string
		items         []catalog.Item
		budget        int
		wantShortened int
		wantOmitted   []string
		wantOver      bool
	}{
		{"fits", items(5, 400), utf8.RuneCountInString(full), 0, []string{}, false},
		{"no limit", items(5, 400), 0, 0, []string{}, false},
		{"shortens before dropping", items(5, 400), 1200, 5, []string{}, false},
		{"drops from the end", items(5, 400), 600, 3, []string{"skill-d", "skill-e"}, false},
		{"never empty", items(5, 400), 50, 1, []string{"skill-b", "skill-c", "skill-d", "skill-e"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, rep := catalog.Budget(tc.items, catalog.FormatXML, tc.budget)
			if len(rep.Shortened) != tc.wantShortened || !reflect.DeepEqual(rep.Omitted, tc.wantOmitted) || rep.OverBudget != tc.wantOver {
				t.Errorf("report %+v", rep)
			}
			if n := utf8.RuneCountInString(out); n != rep.Length || (!tc.wantOver && tc.budget > 0 && n > tc.budget) {
				t.Errorf("length %d (report %d), budget %d", n, rep.Length, tc.budget)
			}
			if !strings.Contains(out, "<name>\nskill-a\n</name>") {
				t.Errorf("first skill missing:\n%s", out)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	got := catalog.JSON([]catalog.Item{{Name: "a", Description: "d", Tier: 2, InvokableBy: []string{"T0"}, Source: "/r", Location: "/r/a/SKILL.md"}})
	want := "[\n  {\n    \"name\": \"a\",\n    \"description\": \"d\",\n    \"tier\": 2,\n    \"invokable_by\": [\n      \"T0\"\n    ],\n    \"source\": \"/r\"\n  }\n]"
	if got != want {
		t.Errorf("got %s", got)
	}
	if got := catalog.JSON(nil); got != "[]" {
		t.Errorf("empty: %s", got)
	}
}

// TestXMLTrust: a first_party skill's entry names its trust after its
// location; an imported one (or one without a trust) is skills-ref's.
func TestXMLTrust(t *testing.T) {
	tests := []struct{ trust, want string }{
		{"", "<available_skills>\n<skill>\n<name>\na\n</name>\n<description>\nd\n</description>\n<location>\nx/a\n</location>\n</skill>\n</available_skills>"},
		{"imported", "<available_skills>\n<skill>\n<name>\na\n</name>\n<description>\nd\n</description>\n<location>\nx/a\n</location>\n</skill>\n</available_skills>"},
		{"first_party", "<available_skills>\n<skill>\n<name>\na\n</name>\n<description>\nd\n</description>\n<location>\nx/a\n</location>\n<trust>\nfirst_party\n</trust>\n</skill>\n</available_skills>"},
	}
	for _, tc := range tests {
		if got := catalog.XML([]catalog.Item{{Name: "a", Description: "d", Location: "x/a", Trust: tc.trust}}); got != tc.want {
			t.Errorf("trust %q:\n got %q\nwant %q", tc.trust, got, tc.want)
		}
	}
}
