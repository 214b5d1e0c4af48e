package mcpclient

import "encoding/json"

// EntryFilesForTest returns the error entryFiles finds in raw ("" when
// none).
func EntryFilesForTest(raw json.RawMessage) string {
	if _, _, err := entryFiles(raw); err != nil {
		return err.Error()
	}
	return ""
}

// ParseSkillsPageForTest is parseSkillsPage.
func ParseSkillsPageForTest(raw json.RawMessage) ([]json.RawMessage, string, error) {
	return parseSkillsPage(raw)
}

// EntryFilesOfForTest is entryFiles.
func EntryFilesOfForTest(raw json.RawMessage) (string, []string, error) { return entryFiles(raw) }
