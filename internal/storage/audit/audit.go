// Package audit defines skillgate's tamper-evident audit log: the record of
// every state change (installs, approvals, grants) and every capability
// decision, with who, what, when and why.
//
// Records form a hash chain. Each record carries the hash of the one before
// it (Prev) and its own hash (Hash), the SHA-256 of a domain tag followed by
// the RFC 8785 canonical JSON of every other field. Editing any field of any
// record, deleting a record, inserting one or reordering them breaks the
// chain at that point, and [Verify] names the first record where it breaks.
//
// A chain alone cannot show that records were cut off its end: the shorter
// log is still a valid chain. [Head] is the last record's sequence number
// and hash; keep a copy outside the store (print it with `skillgate audit
// head`) and pass it to [Verify] to detect truncation too.
//
// Storage is not this package's job: a [store.AuditStore] keeps the
// records ([NewLog] makes it a [Log]), and every store change that is
// recorded (an install transition, a grant) appends its record, sealed with
// [SealStored], in the same transaction as the change itself.
package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// Genesis is the Prev of the first record in a log.
const Genesis = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// hashTag separates audit hashes from every other SHA-256 skillgate
// computes, so a hash from one domain is never valid in another.
const hashTag = "skillgate/audit/v1\x00"

// Record is one audit entry. Its fields are those of [store.AuditRecord],
// the form the store keeps: Seq numbers records from 1 in append order,
// Time is when the event happened, Actor who caused it ("operator:alice",
// "agent:acme/planner", "system"), Session the agent session of a
// decision, Action what happened ("install.approve", "capability.invoke",
// "grant.add"), Subject what it happened to (a skill key or a capability),
// Decision allow, deny or require_approval for decisions, Reasons why,
// ArgsHash the [HashArgs] of a call's arguments, LatencyNS how long it took,
// Data event-specific details as a JSON object, Prev the previous record's
// Hash (or [Genesis]) and Hash this record's hash ([Record.ComputeHash]).
type Record store.AuditRecord

// hashed is the part of a record its hash covers: everything but Hash.
// Time is hashed as a decimal string of Unix nanoseconds: no formatting
// choice can change it, and RFC 8785 would round a JSON number that large
// to a double, hiding a one-nanosecond edit.
type hashed struct {
	Seq       int64           `json:"seq"`
	TimeNS    string          `json:"timeNs"`
	Actor     string          `json:"actor"`
	Session   string          `json:"session"`
	Action    string          `json:"action"`
	Subject   string          `json:"subject"`
	Decision  string          `json:"decision"`
	Reasons   []string        `json:"reasons"`
	ArgsHash  string          `json:"argsHash"`
	LatencyNS int64           `json:"latencyNs"`
	Data      json.RawMessage `json:"data"`
	Prev      string          `json:"prev"`
}

// ErrInvalidRecord means a record cannot be appended as given.
var ErrInvalidRecord = errors.New("invalid audit record")

// Check reports whether a record is complete enough to append: an actor, an
// action, a subject, a known decision if any, and Data that is a JSON
// object if present. The error wraps [ErrInvalidRecord] and names the field.
func (r Record) Check() error {
	switch {
	case r.Actor == "":
		return fmt.Errorf("%w: actor is empty", ErrInvalidRecord)
	case r.Action == "":
		return fmt.Errorf("%w: action is empty", ErrInvalidRecord)
	case r.Subject == "":
		return fmt.Errorf("%w: subject is empty", ErrInvalidRecord)
	}
	if r.Decision != "" && !r.Decision.Valid() {
		return fmt.Errorf("%w: decision %q is not allow, deny or require_approval", ErrInvalidRecord, r.Decision)
	}
	if len(r.Data) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(r.Data, &obj); err != nil {
			return fmt.Errorf("%w: data is not a JSON object: %v", ErrInvalidRecord, err)
		}
	}
	return nil
}

// ComputeHash returns the record's hash: "sha256:" + hex SHA-256 of the
// domain tag "skillgate/audit/v1\x00" followed by the RFC 8785 canonical
// JSON of every field except Hash.
func (r Record) ComputeHash() (string, error) {
	sum := sha256.New()
	if canon, ok := r.appendCanonical(make([]byte, 0, 512)); ok {
		sum.Write([]byte(hashTag))
		sum.Write(canon)
		return "sha256:" + hex.EncodeToString(sum.Sum(nil)), nil
	}
	canon, err := r.canonicalGeneric()
	if err != nil {
		return "", err
	}
	sum.Write([]byte(hashTag))
	sum.Write(canon)
	return "sha256:" + hex.EncodeToString(sum.Sum(nil)), nil
}

// canonicalGeneric is the RFC 8785 form of the hashed fields through a
// general canonicaliser: the definition appendCanonical must agree with.
func (r Record) canonicalGeneric() ([]byte, error) {
	h := hashed{
		Seq: r.Seq, TimeNS: strconv.FormatInt(r.Time.UnixNano(), 10), Actor: r.Actor, Session: r.Session,
		Action: r.Action, Subject: r.Subject, Decision: string(r.Decision), Reasons: r.Reasons,
		ArgsHash: r.ArgsHash, LatencyNS: r.LatencyNS, Data: r.Data, Prev: r.Prev,
	}
	if h.Reasons == nil {
		h.Reasons = []string{}
	}
	if len(h.Data) == 0 {
		h.Data = json.RawMessage("null")
	}
	raw, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("audit: hash record %d: %w", r.Seq, err)
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("audit: hash record %d: %w", r.Seq, err)
	}
	return canon, nil
}

// appendCanonical appends the RFC 8785 form of the record's hashed fields
// (see [hashed]) to b, writing it directly: the keys are fixed and sorted,
// so no JSON needs parsing. It reports false for what it does not write
// itself (Data present, a string that is not valid UTF-8, an integer beyond
// 2^53), which ComputeHash then canonicalises the general way; both give
// the same bytes.
func (r Record) appendCanonical(b []byte) ([]byte, bool) {
	const maxExact = 1 << 53
	if len(r.Data) > 0 || r.Seq > maxExact || r.Seq < -maxExact || r.LatencyNS > maxExact || r.LatencyNS < -maxExact {
		return nil, false
	}
	ok := true
	str := func(key, v string) {
		b = append(b, key...)
		if ok = ok && utf8.ValidString(v); ok {
			b = appendCanonicalString(b, v)
		}
	}
	str(`{"action":`, r.Action)
	str(`,"actor":`, r.Actor)
	str(`,"argsHash":`, r.ArgsHash)
	b = append(b, `,"data":null`...)
	str(`,"decision":`, string(r.Decision))
	b = append(b, `,"latencyNs":`...)
	b = strconv.AppendInt(b, r.LatencyNS, 10)
	prev := r.Prev
	str(`,"prev":`, prev)
	b = append(b, `,"reasons":[`...)
	for i, v := range r.Reasons {
		if i > 0 {
			b = append(b, ',')
		}
		if ok = ok && utf8.ValidString(v); ok {
			b = appendCanonicalString(b, v)
		}
	}
	b = append(b, `],"seq":`...)
	b = strconv.AppendInt(b, r.Seq, 10)
	str(`,"session":`, r.Session)
	str(`,"subject":`, r.Subject)
	b = append(b, `,"timeNs":"`...)
	b = strconv.AppendInt(b, r.Time.UnixNano(), 10)
	b = append(b, `"}`...)
	return b, ok
}

// appendCanonicalString appends s (valid UTF-8) as RFC 8785 writes a
// string: '"' and '\' escaped, control characters as \b \t \n \f \r
// or \u00xx, everything else as it is.
func appendCanonicalString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Seal makes r the successor of prev (a record with Seq 0 and Hash "" stands
// for the empty log): it sets Seq, Prev and Hash, and normalises Time to
// UTC. It is what a [Log] implementation calls inside its append
// transaction.
func Seal(prev Head, r Record) (Record, error) {
	if err := r.Check(); err != nil {
		return Record{}, err
	}
	r.Seq = prev.Seq + 1
	r.Prev = prev.Hash
	if r.Prev == "" {
		r.Prev = Genesis
	}
	r.Time = r.Time.UTC()
	h, err := r.ComputeHash()
	if err != nil {
		return Record{}, err
	}
	r.Hash = h
	return r, nil
}

// HashArgs returns "sha256:" + hex SHA-256 of the RFC 8785 canonical form of
// a call's JSON arguments, so equal arguments hash equally whatever their key
// order or spacing. Empty arguments hash as {}.
//
// The canonical form is exactly what github.com/gowebpki/jcs's Transform
// gives (stored hashes depend on it), and arguments it rejects are an
// error. A fast canonicaliser writes it for ordinary JSON; anything else
// goes through jcs itself (see hashargs.go).
func HashArgs(args json.RawMessage) (string, error) {
	if len(args) == 0 || string(args) == "{}" {
		// The arguments of every call of a tool without parameters.
		return emptyArgsHash, nil
	}
	return hashArgs(args)
}

// emptyArgsHash is HashArgs of the empty object.
var emptyArgsHash = func() string {
	h, err := hashArgs(json.RawMessage("{}"))
	if err != nil {
		panic(err)
	}
	return h
}()

func hashArgs(args json.RawMessage) (string, error) {
	c, canon, _, err := canonicalArgs(args)
	if err != nil {
		c.release()
		return "", fmt.Errorf("audit: hash arguments: %w", err)
	}
	sum := sha256.Sum256(canon)
	c.release()
	var out [len("sha256:") + 2*sha256.Size]byte
	copy(out[:], "sha256:")
	hex.Encode(out[len("sha256:"):], sum[:])
	return string(out[:]), nil
}

// Head identifies the last record of a log: its sequence number and hash.
// The zero Head is the empty log.
type Head store.AuditHead

// String renders a head as "SEQ:HASH", the form [ParseHead] reads.
func (h Head) String() string { return strconv.FormatInt(h.Seq, 10) + ":" + h.Hash }

// ParseHead reads a head written by [Head.String].
func ParseHead(s string) (Head, error) {
	seq, hash, ok := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.ParseInt(seq, 10, 64)
	if !ok || err != nil || n < 1 || !strings.HasPrefix(hash, "sha256:") || len(hash) != len(Genesis) {
		return Head{}, fmt.Errorf("audit: head %q is not SEQ:sha256:HEX as printed by `skillgate audit head`", s)
	}
	return Head{Seq: n, Hash: hash}, nil
}

// Filter selects records: [store.AuditFilter] (AfterSeq; Actor, Session,
// Subject and Decision exactly; Action exactly or as a prefix ending in "."
// or "*"; Since and Until; Limit, with Last the last Limit). The zero Filter
// selects every record.
type Filter store.AuditFilter

// Log appends and reads audit records. Implementations are safe for
// concurrent use and append atomically: a record is sealed against the
// current head and stored in one transaction.
type Log interface {
	// Append seals and stores records in order, returning them as stored.
	Append(ctx context.Context, rs ...Record) ([]Record, error)
	// Query returns the records matching f in Seq order.
	Query(ctx context.Context, f Filter) ([]Record, error)
	// Scan calls fn for every record with Seq > afterSeq, in Seq order,
	// without holding them all in memory. An error from fn stops it.
	Scan(ctx context.Context, afterSeq int64, fn func(Record) error) error
	// Head returns the last record's head, or the zero Head.
	Head(ctx context.Context) (Head, error)
}

// SealStored is [Seal] over the store's types: the [store.AuditSeal] every
// store change that appends an audit record is given.
func SealStored(head store.AuditHead, r store.AuditRecord) (store.AuditRecord, error) {
	sealed, err := Seal(Head(head), Record(r))
	return store.AuditRecord(sealed), err
}

// StoreLog is the [Log] kept in a [store.AuditStore]: records are sealed
// with [Seal] inside the store's append transaction.
type StoreLog struct{ st store.AuditStore }

var _ Log = (*StoreLog)(nil)

// NewLog returns the log kept in st.
func NewLog(st store.AuditStore) *StoreLog { return &StoreLog{st: st} }

// Append implements [Log].
func (l *StoreLog) Append(ctx context.Context, rs ...Record) ([]Record, error) {
	in := make([]store.AuditRecord, len(rs))
	for i, r := range rs {
		in[i] = store.AuditRecord(r)
	}
	out, err := l.st.AppendAudit(ctx, SealStored, in...)
	return records(out), err
}

// Query implements [Log].
func (l *StoreLog) Query(ctx context.Context, f Filter) ([]Record, error) {
	out, err := l.st.AuditRecords(ctx, store.AuditFilter(f))
	return records(out), err
}

// Scan implements [Log].
func (l *StoreLog) Scan(ctx context.Context, afterSeq int64, fn func(Record) error) error {
	return l.st.ScanAudit(ctx, afterSeq, func(r store.AuditRecord) error { return fn(Record(r)) })
}

// Head implements [Log].
func (l *StoreLog) Head(ctx context.Context) (Head, error) {
	h, err := l.st.AuditHead(ctx)
	return Head(h), err
}

// records converts stored records to Records; nil stays nil.
func records(rs []store.AuditRecord) []Record {
	if rs == nil {
		return nil
	}
	out := make([]Record, len(rs))
	for i, r := range rs {
		out[i] = Record(r)
	}
	return out
}

// WriteRecords writes records as JSON lines, or one readable line each
// (sequence, time, action, subject, actor, then the session, decision,
// data and reasons a record has), as 'skillgate audit tail' and 'audit
// query' print them.
func WriteRecords(w io.Writer, rs []Record, asJSON bool) {
	for _, r := range rs {
		if asJSON {
			b, _ := json.Marshal(r)
			_, _ = w.Write(append(b, '\n'))
			continue
		}
		line := fmt.Sprintf("%6d %s %-22s %-28s %s", r.Seq, r.Time.Format("2006-01-02T15:04:05.000Z"), r.Action, r.Subject, r.Actor)
		if r.Session != "" {
			line += " session=" + r.Session
		}
		if r.Decision != "" {
			line += " " + strings.ToUpper(string(r.Decision))
		}
		if len(r.Data) > 0 {
			line += " " + string(r.Data)
		}
		if len(r.Reasons) > 0 {
			line += " — " + strings.Join(r.Reasons, "; ")
		}
		fmt.Fprintln(w, line)
	}
}
