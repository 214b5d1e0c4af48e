package mcpskills

import (
	"strings"

	"github.com/skillgate/skillgate/internal/model/skillsext"
)

// mimeType is the MIME type served for a skill file, from its name alone
// (so that a directory listing and a read agree).
func mimeType(p string) string {
	base := p[strings.LastIndexByte(p, '/')+1:]
	switch {
	case base == skillsext.SkillFile || strings.HasSuffix(base, ".md"):
		return "text/markdown"
	case strings.HasSuffix(base, ".json"):
		return "application/json"
	case strings.HasSuffix(base, ".py"):
		return "text/x-python"
	case strings.HasSuffix(base, ".sh"):
		return "text/x-shellscript"
	case strings.HasSuffix(base, ".yaml"), strings.HasSuffix(base, ".yml"):
		return "application/yaml"
	case strings.HasSuffix(base, ".html"):
		return "text/html"
	case strings.HasSuffix(base, ".txt"):
		return "text/plain"
	case strings.HasSuffix(base, ".pdf"):
		return "application/pdf"
	}
	return "application/octet-stream"
}
