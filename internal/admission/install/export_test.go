package install

import (
	"encoding/json"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// VerifyEntryForTest is verifyEntry for one entry whose listed files were
// read as files (by URI).
func VerifyEntryForTest(raw json.RawMessage, files map[string][]byte) manifest.PublishedSkill {
	pe := mcpclient.PublishedEntry{Raw: raw}
	for uri, c := range files {
		pe.Files = append(pe.Files, mcpclient.PublishedFile{URI: uri, Content: c})
	}
	return verifyEntry("k", "srv", 0, pe)
}
