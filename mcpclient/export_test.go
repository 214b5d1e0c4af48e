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
