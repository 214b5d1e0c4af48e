package vfs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

// Read formatting constants (deepagents ≤0.4).
const (
	// DefaultReadLimit is the number of lines Read returns when limit <= 0.
	DefaultReadLimit = 2000
	// MaxLineLength is the longest row Read prints; longer lines continue on
	// rows numbered N.1, N.2, … (counted in characters, as Python does).
	MaxLineLength = 5000
	// EmptyContentWarning is Read's answer for an empty (or whitespace-only)
	// file. It is a success, not an error.
	EmptyContentWarning = "System reminder: File exists but has empty contents"
	// binarySniffLen is how much of a file is searched for NUL bytes.
	binarySniffLen = 8 << 10
)

// binaryTypes are extensions known to be binary, with their media types.
// A file with one of these extensions is reported as binary without being
// read; deepagents' non-text list (images, audio, video, pdf, ppt) plus
// archives, office documents, executables and fonts.
var binaryTypes = map[string]string{
	".pdf": "application/pdf", ".ppt": "application/vnd.ms-powerpoint",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".doc":  "application/msword",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xls":  "application/vnd.ms-excel",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".odt":  "application/vnd.oasis.opendocument.text",
	".png":  "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".heic": "image/heic", ".heif": "image/heif", ".bmp": "image/bmp",
	".ico": "image/x-icon", ".tif": "image/tiff", ".tiff": "image/tiff",
	".mp4": "video/mp4", ".mpeg": "video/mpeg", ".mpg": "video/mpeg", ".mov": "video/quicktime",
	".avi": "video/x-msvideo", ".flv": "video/x-flv", ".webm": "video/webm", ".wmv": "video/x-ms-wmv",
	".3gpp": "video/3gpp",
	".wav":  "audio/wav", ".mp3": "audio/mpeg", ".aiff": "audio/aiff", ".aac": "audio/aac",
	".ogg": "audio/ogg", ".flac": "audio/flac",
	".zip": "application/zip", ".gz": "application/gzip", ".tgz": "application/gzip",
	".tar": "application/x-tar", ".bz2": "application/x-bzip2", ".xz": "application/x-xz",
	".7z": "application/x-7z-compressed", ".rar": "application/vnd.rar", ".jar": "application/java-archive",
	".exe": "application/vnd.microsoft.portable-executable", ".dll": "application/vnd.microsoft.portable-executable",
	".so": "application/x-sharedlib", ".dylib": "application/x-mach-binary", ".wasm": "application/wasm",
	".class": "application/java-vm", ".pyc": "application/x-python-code", ".o": "application/x-object",
	".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
	".sqlite": "application/vnd.sqlite3", ".db": "application/octet-stream", ".bin": "application/octet-stream",
}

// binaryExtType returns the media type of a known binary extension.
func binaryExtType(name string) (string, bool) {
	ext := path.Ext(name)
	if ext == "" {
		return "", false
	}
	t, ok := binaryTypes[strings.ToLower(ext)]
	return t, ok
}

// isBinaryContent reports content that is not text: a NUL byte in the first
// 8 KiB, or invalid UTF-8 anywhere.
func isBinaryContent(content []byte) bool {
	if bytes.IndexByte(content[:min(len(content), binarySniffLen)], 0) >= 0 {
		return true
	}
	return !utf8.Valid(content)
}

// sniffType names the media type of binary content: the extension's type
// when known, else what http.DetectContentType finds in the first 512 bytes.
func sniffType(name string, content []byte) string {
	if t, ok := binaryExtType(name); ok {
		return t
	}
	t := http.DetectContentType(content)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	if strings.HasPrefix(t, "text/") {
		// DetectContentType calls invalid UTF-8 text; it still cannot be
		// shown as text.
		return "application/octet-stream"
	}
	return t
}

// Read returns the file at path in `cat -n` form: each line as its number
// right-aligned in six columns, a tab and the line, starting at the 0-based
// line offset and for at most limit lines (limit <= 0 means
// DefaultReadLimit; a negative offset is taken as 0). Lines are split at
// "\n", "\r\n" and "\r"; a line longer than MaxLineLength characters
// continues on rows labelled N.1, N.2, …. An empty or whitespace-only file
// gives EmptyContentWarning.
//
// Errors ([*Error]; Kind in brackets): "Error: File '<path>' not found"
// [ErrNotFound] also for directories and for files of skills that are not
// loaded; "Error: Line offset <o> exceeds file length (<n> lines)"
// [ErrOffset]; the binary-file message [ErrBinary]; the too-large message
// [ErrTooLarge]; path refusals [ErrInvalidPath]; "Error reading file
// '<path>': storage error" [ErrIO].
func (f *FS) Read(ctx context.Context, p string, offset, limit int) (string, error) {
	content, _, err := f.readText(ctx, p)
	if errors.Is(err, ErrTooLarge) {
		// Over the bound: stream it, and bound what is returned instead.
		return f.readWindow(ctx, p, offset, limit)
	}
	if err != nil {
		return "", err
	}
	return FormatContent(content, offset, limit)
}

// readChunk is how much of a large file readWindow reads at a time.
const readChunk = 64 << 10

// readWindow is Read of a file larger than Options.MaxFileSize: the file is
// streamed, offset lines skipped and the next limit lines kept, so that
// memory and the answer are bounded by MaxFileSize whatever the file's
// size. The lines asked for must fit in MaxFileSize (else errWindowTooLarge,
// which names the bound and suggests grep); a NUL byte in the file's first
// 8 KiB, or invalid UTF-8 in the lines returned, makes it binary.
func (f *FS) readWindow(ctx context.Context, p string, offset, limit int) (string, error) {
	loc, err := f.resolve(f.tbl.Load(), p)
	if err != nil {
		return "", err
	}
	if loc.m == nil || loc.rel == "" {
		return "", errNotFound(loc.path)
	}
	rc, info, err := loc.m.store.Get(ctx, loc.key())
	if err != nil {
		return "", f.storeErr("reading", loc.path, err)
	}
	defer rc.Close()
	if offset < 0 {
		offset = 0
	}
	if limit <= 0 {
		limit = DefaultReadLimit
	}
	max := f.opts.MaxFileSize
	buf := make([]byte, 0, 2*readChunk)
	var window []byte
	n, pos, eof, sniffed, done := 0, 0, false, false, false
	// take handles one line (with its terminator) of the file.
	take := func(line []byte) error {
		if n >= offset {
			if int64(len(window)+len(line)) > max {
				return errWindowTooLarge(loc.path, offset, limit, info.Size, max)
			}
			window = append(window, line...)
			done = n-offset+1 == limit
		}
		n++
		return nil
	}
	for !done {
		// Every complete line in buf[pos:]; a final "\r" waits for the next
		// byte, which may make it "\r\n".
		for !done {
			rest := buf[pos:]
			i := bytes.IndexAny(rest, "\r\n")
			if i < 0 || rest[i] == '\r' && i+1 == len(rest) && !eof {
				break
			}
			end := i + 1
			if rest[i] == '\r' && end < len(rest) && rest[end] == '\n' {
				end++
			}
			if err := take(rest[:end]); err != nil {
				return "", err
			}
			pos += end
		}
		if done {
			break
		}
		if eof {
			if pos < len(buf) {
				if err := take(buf[pos:]); err != nil {
					return "", err
				}
			}
			break
		}
		buf = append(buf[:0], buf[pos:]...)
		pos = 0
		if n < offset && len(buf) > readChunk && bytes.IndexByte(buf, '\r') < 0 {
			buf = buf[:0] // the middle of a long line being skipped: only its end matters
		} else if n >= offset && int64(len(window)+len(buf)) > max {
			return "", errWindowTooLarge(loc.path, offset, limit, info.Size, max)
		}
		if err := ctx.Err(); err != nil {
			return "", f.storeErr("reading", loc.path, err)
		}
		buf = slices.Grow(buf, readChunk)
		m, err := io.ReadFull(rc, buf[len(buf):len(buf)+readChunk])
		chunk := buf[len(buf) : len(buf)+m]
		if !sniffed {
			sniffed = true
			if bytes.IndexByte(chunk[:min(len(chunk), binarySniffLen)], 0) >= 0 {
				return "", errBinary(loc.path, sniffType(loc.rel, chunk), info.Size)
			}
		}
		buf = buf[:len(buf)+m]
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			eof = true
		case err != nil:
			return "", f.storeErr("reading", loc.path, err)
		}
	}
	if n <= offset {
		return "", errOffset(offset, n)
	}
	if !utf8.Valid(window) {
		return "", errBinary(loc.path, "application/octet-stream", info.Size)
	}
	return formatRows(window, offset, limit), nil
}

// readText fetches a text file, refusing binary and oversized ones.
func (f *FS) readText(ctx context.Context, p string) ([]byte, string, error) {
	loc, err := f.resolve(f.tbl.Load(), p)
	if err != nil {
		return nil, "", err
	}
	if loc.m == nil || loc.rel == "" {
		return nil, loc.path, errNotFound(loc.path)
	}
	key := loc.key()
	if mime, ok := binaryExtType(loc.rel); ok {
		info, err := loc.m.store.Stat(ctx, key)
		if err != nil {
			return nil, loc.path, f.storeErr("reading", loc.path, err)
		}
		return nil, loc.path, errBinary(loc.path, mime, info.Size)
	}
	content, info, err := blob.ReadAll(ctx, loc.m.store, key, f.opts.MaxFileSize)
	if err != nil {
		if errors.Is(err, blob.ErrTooLarge) {
			return nil, loc.path, errTooLarge(loc.path, info.Size, f.opts.MaxFileSize)
		}
		return nil, loc.path, f.storeErr("reading", loc.path, err)
	}
	if isBinaryContent(content) {
		return nil, loc.path, errBinary(loc.path, sniffType(loc.rel, content), info.Size)
	}
	return content, loc.path, nil
}

// FormatContent formats text content exactly as [FS.Read] does, with the
// same offset and limit rules and errors. It is exported so that a caller
// holding the bytes (and the benchmarks comparing Read with os.ReadFile) can
// format without a store.
func FormatContent(content []byte, offset, limit int) (string, error) {
	if len(bytes.TrimSpace(content)) == 0 {
		return EmptyContentWarning, nil
	}
	if offset < 0 {
		offset = 0
	}
	if limit <= 0 {
		limit = DefaultReadLimit
	}
	hasCR := bytes.IndexByte(content, '\r') >= 0
	// Skip offset lines.
	pos, n := 0, 0
	for n < offset && pos < len(content) {
		_, pos = nextLine(content, pos, hasCR)
		n++
	}
	if pos >= len(content) {
		for pos < len(content) {
			_, pos = nextLine(content, pos, hasCR)
			n++
		}
		return "", errOffset(offset, n)
	}
	return formatRows(content[pos:], offset, limit), nil
}

// formatRows formats at most limit lines of content, numbered from
// first+1.
func formatRows(content []byte, first, limit int) string {
	hasCR := bytes.IndexByte(content, '\r') >= 0
	// Size the output: the window's bytes plus a gutter per line.
	rows := bytes.Count(content, []byte{'\n'}) + 1
	if rows > limit {
		rows = limit
	}
	var b strings.Builder
	b.Grow(len(content) + rows*8)
	var num [24]byte
	pos := 0
	for i := 0; i < limit && pos < len(content); i++ {
		var line []byte
		line, pos = nextLine(content, pos, hasCR)
		if i > 0 {
			b.WriteByte('\n')
		}
		writeRow(&b, num[:0], first+i+1, line)
	}
	return b.String()
}

// nextLine returns the line starting at pos and the position after its
// terminator ("\n", "\r\n" or "\r"), as Python's splitlines would.
func nextLine(content []byte, pos int, hasCR bool) ([]byte, int) {
	rest := content[pos:]
	var i int
	if hasCR {
		i = bytes.IndexAny(rest, "\r\n")
	} else {
		i = bytes.IndexByte(rest, '\n')
	}
	if i < 0 {
		return rest, len(content)
	}
	next := pos + i + 1
	if rest[i] == '\r' && i+1 < len(rest) && rest[i+1] == '\n' {
		next++
	}
	return rest[:i], next
}

// writeRow writes one numbered line, splitting it into MaxLineLength-
// character chunks labelled N, N.1, N.2, ….
func writeRow(b *strings.Builder, num []byte, n int, line []byte) {
	num = strconv.AppendInt(num, int64(n), 10)
	if len(line) <= MaxLineLength || utf8.RuneCount(line) <= MaxLineLength {
		pad(b, len(num))
		b.Write(num)
		b.WriteByte('\t')
		b.Write(line)
		return
	}
	for chunk := 0; len(line) > 0; chunk++ {
		cut, chars := 0, 0
		for cut < len(line) && chars < MaxLineLength {
			_, size := utf8.DecodeRune(line[cut:])
			cut += size
			chars++
		}
		if chunk > 0 {
			b.WriteByte('\n')
			label := strconv.AppendInt(append(num, '.'), int64(chunk), 10)
			pad(b, len(label))
			b.Write(label)
		} else {
			pad(b, len(num))
			b.Write(num)
		}
		b.WriteByte('\t')
		b.Write(line[:cut])
		line = line[cut:]
	}
}

const spaces = "      "

func pad(b *strings.Builder, width int) {
	if width < len(spaces) {
		b.WriteString(spaces[width:])
	}
}
