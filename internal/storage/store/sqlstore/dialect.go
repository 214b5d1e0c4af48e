package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// Dialect is what differs between the SQL databases the store runs on.
// Queries are written once, with ? placeholders and TRUE and FALSE
// literals; the dialect rewrites them and says how values are stored.
type Dialect interface {
	// Name is the driver's name ("sqlite", "postgres"), as errors give it.
	Name() string
	// Rebind returns query in the database's form: its placeholders and
	// boolean literals. Text in quotes is left as it is.
	Rebind(query string) string
	// EncodeText is how the registry's text columns (paths, keys, names,
	// JSON documents) hold s, and DecodeText reverses it: the identity
	// where a text column holds any bytes.
	EncodeText(s string) string
	DecodeText(s string) string
	// Lock takes the lock l, between processes, until tx ends: nothing
	// where one writer at a time holds the whole database anyway.
	Lock(ctx context.Context, tx *sql.Tx, l Lock) error
	// ForUpdate is the clause that locks the rows a SELECT reads until its
	// transaction ends (" FOR UPDATE"), or "" where transactions are
	// serialized.
	ForUpdate() string
	// IsUnique reports whether err is a unique constraint's violation.
	IsUnique(err error) bool
	// Arrays reports whether a Go slice binds as one array value (col =
	// ANY(?)); otherwise a set of values binds as an IN list.
	Arrays() bool
	// BatchInserts reports whether rows written together go in one
	// multi-row INSERT, one round trip, instead of one prepared statement
	// executed per row (cheap where the database is in the process).
	BatchInserts() bool
}

// Lock names a kind of change that processes sharing a database make one
// at a time (see [Dialect.Lock]).
type Lock int

// The kinds of change serialized between processes.
const (
	// LockMigrate serializes schema migrations, so processes opening a new
	// database at once migrate it once.
	LockMigrate Lock = iota + 1
	// LockAudit serializes audit appends, so the hash chain stays one and
	// without gaps.
	LockAudit
	// LockScan serializes scans of the registry.
	LockScan
)

// RebindNumbered rewrites the ? placeholders of query as $1, $2, … (the
// form of PostgreSQL), outside quoted text.
func RebindNumbered(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	eachOutsideQuotes(query, func(part string, quoted bool) {
		if quoted {
			b.WriteString(part)
			return
		}
		for {
			i := strings.IndexByte(part, '?')
			if i < 0 {
				b.WriteString(part)
				return
			}
			n++
			b.WriteString(part[:i])
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			part = part[i+1:]
		}
	})
	return b.String()
}

// RebindIntegerBooleans rewrites the TRUE and FALSE literals of query as
// 1 and 0 (SQLite's booleans, which its partial indexes are written
// with), outside quoted text.
func RebindIntegerBooleans(query string) string {
	upper := strings.ToUpper(query)
	if !strings.Contains(upper, "TRUE") && !strings.Contains(upper, "FALSE") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query))
	eachOutsideQuotes(query, func(part string, quoted bool) {
		if quoted {
			b.WriteString(part)
			return
		}
		for i := 0; i < len(part); {
			if !isWordByte(part[i]) {
				b.WriteByte(part[i])
				i++
				continue
			}
			j := i
			for j < len(part) && isWordByte(part[j]) {
				j++
			}
			switch w := part[i:j]; {
			case strings.EqualFold(w, "TRUE"):
				b.WriteByte('1')
			case strings.EqualFold(w, "FALSE"):
				b.WriteByte('0')
			default:
				b.WriteString(w)
			}
			i = j
		}
	})
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c == '.' || c == '$' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

// eachOutsideQuotes hands fn the parts of query in order, each outside or
// inside single or double quotes (quotes included).
func eachOutsideQuotes(query string, fn func(part string, quoted bool)) {
	for query != "" {
		i := strings.IndexAny(query, `'"`)
		if i < 0 {
			fn(query, false)
			return
		}
		if i > 0 {
			fn(query[:i], false)
		}
		end := strings.IndexByte(query[i+1:], query[i])
		if end < 0 {
			fn(query[i:], true)
			return
		}
		fn(query[i:i+end+2], true)
		query = query[i+end+2:]
	}
}
