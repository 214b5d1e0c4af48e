package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// TestPromptJSON: prompt --json prints the catalog with what the budget
// kept, shortened and left out, the exact documented document, and
// reports nothing on stderr.
func TestPromptJSON(t *testing.T) {
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples", "skills"))
	if err != nil {
		t.Fatal(err)
	}
	lease := filepath.Join(examples, "contratos", "arrendamiento")
	pdf := filepath.Join(examples, "pdf-forms")
	xml := "<available_skills>\n<skill>\n<name>\narrendamiento\n</name>\n<description>\nDrafts a residential lease (contrato de arrendamiento). Use when a ticket asks for a rental contract.\n</description>\n<location>\n" +
		lease + "/SKILL.md\n</location>\n</skill>\n</available_skills>"
	tests := []struct {
		name string
		args []string
		out  string
	}{
		{"whole", []string{"prompt", "--json", lease}, fmt.Sprintf(`{
  "format": "xml",
  "skills": [
    "arrendamiento"
  ],
  "budget": 0,
  "length": %d,
  "shortened": [],
  "omitted": [],
  "over_budget": false,
  "catalog": %s
}
`, utf8.RuneCountInString(xml), jsonString(t, xml))},
		{"budget", []string{"prompt", "--json", "--format", "json", "--budget", "10", lease, pdf}, `{
  "format": "json",
  "skills": [
    "arrendamiento"
  ],
  "budget": 10,
  "length": LEN,
  "shortened": [
    "arrendamiento"
  ],
  "omitted": [
    "pdf-forms"
  ],
  "over_budget": true,
  "catalog": CAT
}
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, "", tc.args...)
			if strings.Contains(tc.out, "CAT") {
				// The JSON catalog's text is skill_list's, tested with
				// it; here only its place and the report around it.
				i, j := strings.Index(out, `"length": `), strings.Index(out, `"catalog": `)
				k := strings.LastIndex(out, "\n}")
				if i < 0 || j < 0 || k < j {
					t.Fatalf("shape: %s", out)
				}
				l := strings.Index(out[i:], ",")
				out = out[:i] + `"length": LEN` + out[i+l:j] + `"catalog": CAT` + out[k:]
			}
			if code != 0 || out != tc.out || errs != "" {
				t.Errorf("%d %q\n got %s\nwant %s", code, errs, out, tc.out)
			}
		})
	}
}

// TestDiscloseJSON: disclose --json prints the disclosure with what it
// was made for: the discovery fragment of a tier, and a session's view
// with its loaded skills.
func TestDiscloseJSON(t *testing.T) {
	data := t.TempDir()
	examples := filepath.Join("..", "..", "examples", "skills")
	if code, _, errs := run(t, data, "scan", "--root", examples); code != 0 {
		t.Fatalf("scan: %s", errs)
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	// Used now (an idle session expires), loaded at a fixed time.
	db.Now = time.Now
	for _, s := range []store.Session{
		{ID: "s-lease", Tenant: "acme", Agent: "drafter", Tier: "T4", Skills: []store.LoadedSkill{{Key: "contratos/arrendamiento", Mount: "arrendamiento", LoadedAt: at}}},
		{ID: "s-empty", Tenant: "acme", Agent: "drafter", Tier: "T4"},
	} {
		if err := db.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	head := `Skills you can load with the load_skill tool: pass a skill's <location> (its category/name). Its instructions are returned and its files appear under /skills/<name>.\n`
	fragment := head + `<available_skills>\n<skill>\n<name>\narrendamiento\n</name>\n<description>\nDrafts a residential lease (contrato de arrendamiento). Use when a ticket asks for a rental contract.\n</description>\n<location>\ncontratos/arrendamiento\n</location>\n</skill>\n</available_skills>`
	tests := []struct {
		name string
		args []string
		out  string
	}{
		{"tier", []string{"disclose", "--tier", "T4", "--json"}, `{
  "tier": "T4",
  "budget": 8000,
  "view": "discovery",
  "loaded": [],
  "text": "` + fragment + `"
}
`},
		{"category and tenant", []string{"disclose", "--tier", "T4", "--tenant", "acme", "--category", "escrituras", "--budget", "300", "--json"}, `{
  "tier": "T4",
  "tenant": "acme",
  "category": "escrituras",
  "budget": 300,
  "view": "discovery",
  "loaded": [],
  "text": "No skills are available to you."
}
`},
		{"session, nothing loaded", []string{"disclose", "--session", "s-empty", "--json"}, `{
  "tier": "T4",
  "session": "s-empty",
  "budget": 8000,
  "view": "discovery",
  "loaded": [],
  "text": "` + fragment + `"
}
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, data, tc.args...)
			if code != 0 || out != tc.out || errs != "" {
				t.Errorf("%d %q\n got %s\nwant %s", code, errs, out, tc.out)
			}
		})
	}
	code, text, errs := run(t, data, "disclose", "--session", "s-lease")
	if code != 0 || !strings.HasPrefix(text, "<skill_content name=\"arrendamiento\">\n# Contrato de arrendamiento\n") || errs != "" {
		t.Fatalf("loaded session, text: %d %q %s", code, errs, text)
	}
	want := `{
  "tier": "T4",
  "session": "s-lease",
  "budget": 8000,
  "view": "loaded",
  "loaded": [
    {
      "skill": "contratos/arrendamiento",
      "name": "arrendamiento",
      "category": "contratos",
      "mount": "/skills/arrendamiento",
      "loaded_at": "2026-03-01T09:00:00Z"
    }
  ],
  "text": ` + jsonString(t, strings.TrimSuffix(text, "\n")) + `
}
`
	code, out, errs := run(t, data, "disclose", "--session", "s-lease", "--json")
	if code != 0 || out != want || errs != "" {
		t.Errorf("loaded session: %d %q\n got %s\nwant %s", code, errs, out, want)
	}
}

// jsonString is s as jsonout writes a string: quoted, HTML not escaped.
func jsonString(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
