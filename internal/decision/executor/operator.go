package executor

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Operator catalogs: executor catalog files an operator keeps in the data
// directory (DATA/executors/*.yaml, *.yml or *.json), each merged over the
// built-in catalog in file name order, so that a provider skill's
// backends.yaml can serve an executor skillgate does not ship ("+1 backend
// file, +1 skill, 0 new executors") without a rebuild.

// CatalogDirName is the directory of the data directory holding operator
// catalogs.
const CatalogDirName = "executors"

// MaxCatalogFiles bounds the operator catalog files read from one
// directory.
const MaxCatalogFiles = 256

// publishedSchemaJSON is docs/schemas/executor-catalog.v1.json
// (TestEmbeddedSchemaIsPublished holds the copy to it).
//
//go:embed executor-catalog.v1.json
var publishedSchemaJSON []byte

var publishedSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(publishedSchemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	const url = "https://skillgate.dev/schemas/executor-catalog.v1.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
})

// CheckPublished validates a catalog file (YAML or JSON) against the
// published JSON Schema, docs/schemas/executor-catalog.v1.json. Errors
// wrap [ErrInvalidCatalog] and name the file and the place in it.
func CheckPublished(file string, data []byte) error {
	var v any
	if err := decodeYAML(file, data, &v, ErrInvalidCatalog); err != nil {
		return err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%w: %s: %s", ErrInvalidCatalog, file, oneLine(err.Error()))
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%w: %s: %s", ErrInvalidCatalog, file, oneLine(err.Error()))
	}
	s, err := publishedSchema()
	if err != nil {
		return fmt.Errorf("%w: the published schema: %v", ErrInvalidCatalog, err)
	}
	if err := s.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return fmt.Errorf("%w: %s: does not match %s: %s", ErrInvalidCatalog, file, "docs/schemas/executor-catalog.v1.json", schemaCause(ve))
		}
		return fmt.Errorf("%w: %s: %s", ErrInvalidCatalog, file, oneLine(err.Error()))
	}
	return nil
}

// schemaCause names the deepest failing place of a validation error:
// "at /executors/0/name: …".
func schemaCause(ve *jsonschema.ValidationError) string {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	at := "/" + strings.Join(ve.InstanceLocation, "/")
	return oneLine("at " + at + ": " + ve.ErrorKind.LocalizedString(message.NewPrinter(language.English)))
}

// Origin names the file that declared an executor or a provider:
// [BuiltinFile] for the built-in catalog's, "" when c does not declare it.
func (c *Catalog) Origin(kind, name string) string { return c.from[kind+":"+name] }

// The kinds [Catalog.Origin] takes.
const (
	OriginExecutor = "executor"
	OriginProvider = "provider"
)

// Merge returns c with the providers and executors of the catalog file
// data (file names it in errors) added. The file must validate against
// the published schema ([CheckPublished]) and parse ([ParseCatalog]); it
// may repeat a provider c declares with the same suffix, and must not:
// give a provider c declares another suffix, give a new provider a
// suffix c's providers use, redeclare an executor c declares, or name an
// executor with a provider's suffix. Errors wrap [ErrInvalidCatalog] and
// name the file, the entry, the field, where the other declaration is and
// the fix. c is not modified.
func (c *Catalog) Merge(file string, data []byte) (*Catalog, error) {
	if err := CheckPublished(file, data); err != nil {
		return nil, err
	}
	add, err := ParseCatalog(file, data)
	if err != nil {
		return nil, err
	}
	out := &Catalog{Providers: slices.Clone(c.Providers), Executors: slices.Clone(c.Executors),
		byName: maps.Clone(c.byName), byProvider: maps.Clone(c.byProvider), from: maps.Clone(c.from)}
	if out.from == nil {
		out.from = map[string]string{}
	}
	bySuffix := map[string]string{}
	for _, p := range c.Providers {
		bySuffix[p.Suffix] = p.Name
	}
	for _, p := range add.Providers {
		at := fmt.Sprintf("%s: provider %s", file, p.Name)
		if old, ok := c.byProvider[p.Name]; ok {
			if old.Suffix != p.Suffix {
				return nil, fmt.Errorf("%w: %s: suffix %q: %s declares provider %s with suffix %q; write suffix: %s or name the provider otherwise",
					ErrInvalidCatalog, at, p.Suffix, c.Origin(OriginProvider, p.Name), p.Name, old.Suffix, old.Suffix)
			}
			continue
		}
		if other, ok := bySuffix[p.Suffix]; ok {
			return nil, fmt.Errorf("%w: %s: suffix %q is already provider %s's (declared in %s); choose another suffix",
				ErrInvalidCatalog, at, p.Suffix, other, c.Origin(OriginProvider, other))
		}
		bySuffix[p.Suffix] = p.Name
		out.byProvider[p.Name] = p
		out.Providers = append(out.Providers, p)
		out.from[OriginProvider+":"+p.Name] = file
	}
	for _, e := range add.Executors {
		at := fmt.Sprintf("%s: executor %s", file, e.Name)
		if c.byName[e.Name] != nil {
			return nil, fmt.Errorf("%w: %s: name: %s already declares it; an operator catalog adds executors and never redefines one: remove it from %s or name another object",
				ErrInvalidCatalog, at, c.Origin(OriginExecutor, e.Name), file)
		}
		if base, prov, ok := out.SplitProvider(e.Name); ok {
			return nil, fmt.Errorf("%w: %s: name: it carries provider %s's suffix; an executor is provider-neutral: name it %s and declare a backend per provider",
				ErrInvalidCatalog, at, prov, base)
		}
		out.byName[e.Name] = e
		out.Executors = append(out.Executors, e)
		out.from[OriginExecutor+":"+e.Name] = file
	}
	slices.SortFunc(out.Providers, func(a, b Provider) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(out.Executors, func(a, b *Executor) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// CatalogFile is what loading one operator catalog file found.
type CatalogFile struct {
	// Name is the file's name in the directory; Digest its content's
	// SHA-256 ("sha256:…"), the version the audit records.
	Name   string `json:"name"`
	Digest string `json:"digest"`
	// Executors and Providers are what the file added, sorted.
	Executors []string `json:"executors,omitempty"`
	Providers []string `json:"providers,omitempty"`
	// Err is why the file was left out, nil when it was merged.
	Err error `json:"-"`
}

// LoadCatalogDir merges the operator catalog files of dir (*.yaml, *.yml
// and *.json, in name order) over base, each with [Catalog.Merge]. A file
// that does not merge is left out, its error in its [CatalogFile]; the
// others still load. A missing directory is no file. It fails only when
// the directory cannot be read or holds more than [MaxCatalogFiles]
// catalog files.
func LoadCatalogDir(base *Catalog, dir string) (*Catalog, []CatalogFile, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return base, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("executor catalogs: %w", err)
	}
	var names []string
	for _, e := range ents {
		switch filepath.Ext(e.Name()) {
		case ".yaml", ".yml", ".json":
			if e.Type().IsRegular() {
				names = append(names, e.Name())
			}
		}
	}
	if len(names) > MaxCatalogFiles {
		return nil, nil, fmt.Errorf("executor catalogs: %s holds %d catalog files, limit %d", dir, len(names), MaxCatalogFiles)
	}
	slices.Sort(names)
	cat := base
	files := make([]CatalogFile, 0, len(names))
	for _, n := range names {
		f := CatalogFile{Name: n}
		data, err := readBounded(filepath.Join(dir, n))
		if err != nil {
			f.Err = fmt.Errorf("%w: %s: %w", ErrInvalidCatalog, n, err)
			files = append(files, f)
			continue
		}
		sum := sha256.Sum256(data)
		f.Digest = "sha256:" + hex.EncodeToString(sum[:])
		next, err := cat.Merge(n, data)
		if err != nil {
			f.Err = err
			files = append(files, f)
			continue
		}
		for _, e := range next.Executors {
			if next.Origin(OriginExecutor, e.Name) == n {
				f.Executors = append(f.Executors, e.Name)
			}
		}
		for _, p := range next.Providers {
			if next.Origin(OriginProvider, p.Name) == n {
				f.Providers = append(f.Providers, p.Name)
			}
		}
		cat = next
		files = append(files, f)
	}
	return cat, files, nil
}

// readBounded reads a file of at most MaxFileBytes (one byte more is
// read, for decodeYAML to refuse).
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
}

// CatalogFingerprint identifies what a directory's catalog files hold:
// their names and digests. The running gateway compares it at every tick
// of its watch and reloads when it moves.
func CatalogFingerprint(files []CatalogFile) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%s\x00", f.Name, f.Digest)
	}
	return hex.EncodeToString(h.Sum(nil))
}
