package audit

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/platform/strictjson"
)

// A head printed once and kept by hand is easy to forget. A checkpoint is a
// head signed by the skillgate that wrote the log, with the time it was
// taken; `skillgate serve` appends one to a checkpoint file at an interval,
// and `skillgate audit checkpoint` on demand. Kept where whoever can write
// the store cannot (another host, write-once storage), the newest one
// detects a log that was rewritten, re-chained or cut short since: [Verify]
// with its head fails. The signature ties a checkpoint to a key, so a
// checkpoint file cannot be extended with forged heads by someone who does
// not hold that key.

// ErrInvalidCheckpoint means a checkpoint or checkpoint file cannot be
// trusted as given: malformed, badly signed, or signed by another key.
var ErrInvalidCheckpoint = errors.New("invalid audit checkpoint")

// Checkpoint is a signed head: the log's last record at time At.
type Checkpoint struct {
	Head
	At time.Time `json:"at"`
	// Key is the signer's public key, "ed25519:" + base64.
	Key string `json:"key"`
	// Sig is the base64 Ed25519 signature of the checkpoint's payload
	// (see [Checkpoint.payload]).
	Sig string `json:"sig"`
}

// checkpointTag is the domain separator of checkpoint signatures.
const checkpointTag = "skillgate/audit/checkpoint/v1\x00"

// MaxCheckpointFile bounds the checkpoint files [ReadCheckpoints] reads.
const MaxCheckpointFile = 64 << 20

// payload is what is signed: the tag, then sequence number, hash and time
// (Unix nanoseconds, UTC) separated by NUL bytes.
func (c Checkpoint) payload() []byte {
	return []byte(checkpointTag + strconv.FormatInt(c.Seq, 10) + "\x00" + c.Hash + "\x00" + strconv.FormatInt(c.At.UnixNano(), 10))
}

// PublicKeyString renders an Ed25519 public key as checkpoints name it.
func PublicKeyString(pub ed25519.PublicKey) string {
	return "ed25519:" + base64.StdEncoding.EncodeToString(pub)
}

// ParsePublicKey reads a key written by [PublicKeyString].
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	b64, ok := strings.CutPrefix(strings.TrimSpace(s), "ed25519:")
	b, err := base64.StdEncoding.DecodeString(b64)
	if !ok || err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: key %q is not ed25519:BASE64 as printed by `skillgate audit checkpoint`", ErrInvalidCheckpoint, s)
	}
	return ed25519.PublicKey(b), nil
}

// SignCheckpoint signs head h as taken at time at.
func SignCheckpoint(h Head, at time.Time, key ed25519.PrivateKey) Checkpoint {
	c := Checkpoint{Head: h, At: at.UTC().Round(0), Key: PublicKeyString(key.Public().(ed25519.PublicKey))}
	c.Sig = base64.StdEncoding.EncodeToString(ed25519.Sign(key, c.payload()))
	return c
}

// Check verifies the checkpoint's signature, and when trusted is not nil
// that it was made with that key.
func (c Checkpoint) Check(trusted ed25519.PublicKey) error {
	if c.Seq < 1 || !strings.HasPrefix(c.Hash, "sha256:") || len(c.Hash) != len(Genesis) {
		return fmt.Errorf("%w: head %s is not SEQ:sha256:HEX", ErrInvalidCheckpoint, c.Head)
	}
	pub, err := ParsePublicKey(c.Key)
	if err != nil {
		return err
	}
	if trusted != nil && !pub.Equal(trusted) {
		return fmt.Errorf("%w: checkpoint %d is signed by %s, not by the key you trust (%s)", ErrInvalidCheckpoint, c.Seq, c.Key, PublicKeyString(trusted))
	}
	sig, err := base64.StdEncoding.DecodeString(c.Sig)
	if err != nil || !ed25519.Verify(pub, c.payload(), sig) {
		return fmt.Errorf("%w: checkpoint %d (%s) has a bad signature: it was altered or forged", ErrInvalidCheckpoint, c.Seq, c.At.Format(time.RFC3339))
	}
	return nil
}

// ReadCheckpoints reads a checkpoint file (one JSON checkpoint per line)
// and returns its newest checkpoint, after checking every line: each is
// well formed and correctly signed, all by one key (trusted, when not nil),
// and their sequence numbers and times never go backwards. An empty file
// is an error: there is nothing to verify against.
func ReadCheckpoints(path string, trusted ed25519.PublicKey) (Checkpoint, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Checkpoint{}, err
	}
	if fi.Size() > MaxCheckpointFile {
		return Checkpoint{}, fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrInvalidCheckpoint, path, fi.Size(), MaxCheckpointFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Checkpoint{}, err
	}
	return ParseCheckpoints(path, data, trusted)
}

// ParseCheckpoints is [ReadCheckpoints] over the content of a checkpoint
// file; name is used in messages.
func ParseCheckpoints(path string, data []byte, trusted ed25519.PublicKey) (Checkpoint, error) {
	if len(data) > MaxCheckpointFile {
		return Checkpoint{}, fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrInvalidCheckpoint, path, len(data), MaxCheckpointFile)
	}
	var last Checkpoint
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<10)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var c Checkpoint
		if err := strictjson.Decode(text, &c, 8); err != nil {
			return Checkpoint{}, fmt.Errorf("%w: %s:%d: not a checkpoint: %v", ErrInvalidCheckpoint, path, line, err)
		}
		if err := c.Check(trusted); err != nil {
			return Checkpoint{}, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if n > 0 {
			switch {
			case c.Key != last.Key:
				return Checkpoint{}, fmt.Errorf("%w: %s:%d: signed by %s, earlier lines by %s", ErrInvalidCheckpoint, path, line, c.Key, last.Key)
			case c.Seq < last.Seq || c.At.Before(last.At):
				return Checkpoint{}, fmt.Errorf("%w: %s:%d: head %d at %s goes back from head %d at %s", ErrInvalidCheckpoint, path, line, c.Seq, c.At.Format(time.RFC3339), last.Seq, last.At.Format(time.RFC3339))
			case c.Seq == last.Seq && c.Hash != last.Hash:
				return Checkpoint{}, fmt.Errorf("%w: %s:%d: record %d has two different hashes in this file", ErrInvalidCheckpoint, path, line, c.Seq)
			}
		}
		last = c
		n++
	}
	if err := sc.Err(); err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %s: %v", ErrInvalidCheckpoint, path, err)
	}
	if n == 0 {
		return Checkpoint{}, fmt.Errorf("%w: %s holds no checkpoint", ErrInvalidCheckpoint, path)
	}
	return last, nil
}

// AppendCheckpoint appends c as one line to the checkpoint file at path,
// creating it (mode 0600) when missing.
func AppendCheckpoint(path string, c Checkpoint) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// LoadKey returns the Ed25519 signing key kept at path (the base64 seed on
// one line). A missing file is an error wrapping fs.ErrNotExist; a key file
// readable by others than its owner is refused.
func LoadKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("audit signing key %s is readable by others (mode %v): chmod 600 it", path, fi.Mode().Perm())
	}
	seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("audit signing key %s is not a base64 Ed25519 seed", path)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// LoadOrCreateKey is [LoadKey], creating the key (mode 0600) when the file
// is missing.
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	k, err := LoadKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// Written under a temporary name (os.CreateTemp makes it 0600) and
	// linked into place, so that no process ever reads a half-written key,
	// and of two processes creating it at once one wins and the other loads
	// its key.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".audit-key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(base64.StdEncoding.EncodeToString(seed) + "\n"); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
		return LoadKey(path)
	} else if err != nil {
		return nil, err
	}
	return ed25519.NewKeyFromSeed(seed), nil
}
