package main

import (
	"strings"
	"testing"
)

func TestSearchCLI(t *testing.T) {
	root, data := t.TempDir(), t.TempDir()
	write(t, root, map[string]string{
		"docs/pdf-forms/SKILL.md":       "---\nname: pdf-forms\ndescription: Fill PDF forms and flatten them.\n---\n",
		"finance/invoices/SKILL.md":     "---\nname: invoices\ndescription: Read invoices and receipts from PDF scans.\ntier: 1\n---\n",
		"ops/deploy/SKILL.md":           "---\nname: deploy\ndescription: Deploy services to kubernetes.\n---\n",
		"office/meeting-notes/SKILL.md": "---\nname: meeting-notes\ndescription: Summarise a meeting.\n---\n",
	})
	if code, out, errs := run(t, data, "scan", "--root", root); code != 0 {
		t.Fatalf("scan: %d %q %q", code, out, errs)
	}
	tests := []struct {
		name      string
		args      []string
		code      int
		out, errs string
	}{
		{"ranked", []string{"search", "read my scanned receipts"}, 0,
			"SCORE  NAME              TIER  SCOPE    TRUST     STATE    DESCRIPTION\n" +
				"1.40   finance/invoices  1     project  imported  enabled  Read invoices and receipts from PDF scans.\n", ""},
		{"exact name first", []string{"search", "pdf-forms", "--limit", "1"}, 0,
			"SCORE  NAME            TIER  SCOPE    TRUST     STATE    DESCRIPTION\n" +
				"1.41   docs/pdf-forms  2     project  imported  enabled  Fill PDF forms and flatten them.\n", ""},
		{"tier filter", []string{"search", "pdf", "--tier", "2"}, 0,
			"SCORE  NAME            TIER  SCOPE    TRUST     STATE    DESCRIPTION\n" +
				"0.73   docs/pdf-forms  2     project  imported  enabled  Fill PDF forms and flatten them.\n", ""},
		{"json", []string{"search", "kubernetes", "--json"}, 0, "", ""},
		{"nothing", []string{"search", "quantum chemistry"}, 0, "", "no skills match; try other words, or widen the filters\n"},
		{"empty query", []string{"search", " "}, 2, "", "Error: QUERY must be text of 1 to 512 bytes (words that say what the skill is for)\n"},
		{"bad limit", []string{"search", "pdf", "--limit", "0"}, 2, "", "Error: --limit must be between 1 and 1000\n"},
		{"no query", []string{"search"}, 2, "", "Error: skillgate search: expected QUERY, got 0 arguments; see 'skillgate search --help'\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, data, tc.args...)
			if tc.name == "json" {
				if code != 0 || !strings.Contains(out, `"name": "deploy"`) || !strings.Contains(out, `"score": `) {
					t.Errorf("json: %d %q %q", code, out, errs)
				}
				return
			}
			if code != tc.code || out != tc.out || errs != tc.errs {
				t.Errorf("code %d out %q err %q\nwant %d %q %q", code, out, errs, tc.code, tc.out, tc.errs)
			}
		})
	}
}
