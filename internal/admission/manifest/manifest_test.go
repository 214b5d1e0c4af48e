package manifest_test

import (
	"errors"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/manifest"
)

func TestParseErrors(t *testing.T) {
	t.Parallel()
	const head = `{"$schema":"https://skillgate.dev/schemas/manifest.v1.json","skillId":"s","version":"sha256:ab",`
	tests := []struct {
		name, in, want string
	}{
		{"ok", head + `"providers":[{"type":"mcp","serverId":"gh"}],"capabilities":[{"extensionId":"gh","capabilityId":"a","risk":{"riskLevel":{"value":"read","source":"annotations"},"sideEffects":{},"dataEgress":{}}}]}`, ""},
		{"unknown field", head + `"providers":[],"capabilities":[],"extra":1}`, `invalid artefact: manifest: unknown field "extra"`},
		{"trailing", head + `"providers":[],"capabilities":[]} {}`, "invalid artefact: manifest: trailing data after the JSON object"},
		{"bad schema", `{"$schema":"x","skillId":"s","version":"sha256:ab","providers":[],"capabilities":[]}`, `invalid artefact: manifest: $schema is "x"; want "https://skillgate.dev/schemas/manifest.v1.json"`},
		{"bad version", `{"$schema":"https://skillgate.dev/schemas/manifest.v1.json","skillId":"s","version":"v1","providers":[],"capabilities":[]}`, `invalid artefact: manifest: version "v1" is not a sha256: digest`},
		{"no provider", head + `"providers":[],"capabilities":[{"extensionId":"gh","capabilityId":"a","risk":{"riskLevel":{},"sideEffects":{},"dataEgress":{}}}]}`, `invalid artefact: manifest: capabilities[0] (gh/a): no provider with serverId "gh"`},
		{"bad risk", head + `"providers":[{"type":"mcp","serverId":"gh"}],"capabilities":[{"extensionId":"gh","capabilityId":"a","risk":{"riskLevel":{"value":"low","source":"operator"},"sideEffects":{},"dataEgress":{}}}]}`, `invalid artefact: manifest: capabilities[0] (gh/a): risk.riskLevel "low" is not read, write or destructive`},
		{"value without source", head + `"providers":[{"type":"mcp","serverId":"gh"}],"capabilities":[{"extensionId":"gh","capabilityId":"a","risk":{"riskLevel":{"value":"read"},"sideEffects":{},"dataEgress":{}}}]}`, `invalid artefact: manifest: capabilities[0] (gh/a): risk.riskLevel: a value needs a source and a source a value`},
		{"approved unknown", head + `"providers":[{"type":"mcp","serverId":"gh"}],"capabilities":[{"extensionId":"gh","capabilityId":"a","risk":{"riskLevel":{},"sideEffects":{},"dataEgress":{}}}],"approval":{"by":"x","at":"2026-01-01T00:00:00Z"}}`, `invalid artefact: manifest: capabilities[0] (gh/a): approved with unknown riskLevel, sideEffects, dataEgress`},
		{"unsorted", head + `"providers":[{"type":"mcp","serverId":"gh"}],"capabilities":[{"extensionId":"gh","capabilityId":"b","risk":{"riskLevel":{},"sideEffects":{},"dataEgress":{}}},{"extensionId":"gh","capabilityId":"a","risk":{"riskLevel":{},"sideEffects":{},"dataEgress":{}}}]}`, `invalid artefact: manifest: capabilities[1] (gh/a): not sorted or repeated`},
		{"not utf8", "{\"skillId\":\"\xff\"}", "invalid artefact: manifest: not valid UTF-8"},
		{"case variant of a field", `{"$schema":"https://skillgate.dev/schemas/manifest.v1.json","SkillId":"s","version":"sha256:ab","providers":[],"capabilities":[]}`, `invalid artefact: manifest: unknown field "SkillId"`},
		{"case variant of a nested field", head + `"providers":[{"type":"mcp","ServerID":"gh"}],"capabilities":[]}`, `invalid artefact: manifest: providers[0]: unknown field "ServerID"`},
		{"case variant of a risk field", head + `"providers":[{"type":"mcp","serverId":"gh"}],"capabilities":[{"extensionId":"gh","capabilityId":"a","risk":{"riskLevel":{"Value":"destructive","source":"operator"},"sideEffects":{},"dataEgress":{}}}]}`, `invalid artefact: manifest: capabilities[0].risk.riskLevel: unknown field "Value"`},
		{"duplicate key", head + `"providers":[],"capabilities":[],"skillId":"t"}`, `invalid artefact: manifest: duplicate key "skillId"`},
		{"tool name", head + `"providers":[{"type":"mcp","serverId":"gh"}],"capabilities":[{"extensionId":"gh","capabilityId":"a","toolName":"gh__a","toolNameReason":"a is taken by x","risk":{"riskLevel":{},"sideEffects":{},"dataEgress":{}}}]}`, ""},
		{"bad tool name", head + `"providers":[{"type":"mcp","serverId":"gh"}],"capabilities":[{"extensionId":"gh","capabilityId":"a","toolName":"a b","risk":{"riskLevel":{},"sideEffects":{},"dataEgress":{}}}]}`,
			`invalid artefact: manifest: capabilities[0] (gh/a): toolName "a b": use 1 to 128 letters, digits, '_', '-' or '.'`},
		{"tool name twice", head + `"providers":[{"type":"mcp","serverId":"gh"}],"capabilities":[{"extensionId":"gh","capabilityId":"a","toolName":"x","risk":{"riskLevel":{},"sideEffects":{},"dataEgress":{}}},{"extensionId":"gh","capabilityId":"b","toolName":"x","risk":{"riskLevel":{},"sideEffects":{},"dataEgress":{}}}]}`,
			`invalid artefact: manifest: capabilities[1] (gh/b): toolName "x" is also gh/a's`},
		{"approval trust", head + `"providers":[],"capabilities":[],"approval":{"by":"x","at":"2026-01-01T00:00:00Z","trust":"core-ish"}}`,
			`invalid artefact: manifest: approval.trust "core-ish": use first_party or imported`},
		{"approval trust core", head + `"providers":[],"capabilities":[],"approval":{"by":"x","at":"2026-01-01T00:00:00Z","trust":"core"}}`,
			`invalid artefact: manifest: approval.trust "core": use first_party or imported`},
		{"duplicate nested key", head + `"providers":[{"type":"mcp","serverId":"gh","serverId":"x"}],"capabilities":[]}`, `invalid artefact: manifest: providers[0]: duplicate key "serverId"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := manifest.Parse([]byte(tc.in))
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, manifest.ErrInvalid) {
					t.Errorf("does not wrap ErrInvalid: %v", err)
				}
			}
			if got != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
