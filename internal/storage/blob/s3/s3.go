// Package s3 implements [blob.Store] over S3-compatible object storage
// (AWS S3, versitygw, Ceph RGW, …).
//
// It uses the AWS SDK for Go v2 (service/s3) with path-style addressing and
// request checksums only where the operation requires them
// (RequestChecksumCalculation: WhenRequired). Since service/s3 v1.73.0 the SDK
// adds CRC32 checksums to every PutObject by default, and several
// S3-compatible servers reject them. The SDK was chosen over minio-go on
// measurement: `go get service/s3@v1.114.8` resolved cleanly from the module
// proxy here (11 modules, no replace directives), a program using this
// package is 8.6 MB against 5.2 MB for a plain net/http program (+3.4 MB;
// reference/deps.md §2.3 measured +3.0 MB for minio-go v7.4.1, so nothing
// to gain), and versitygw, our test server, is built on the same SDK, so
// both sides of the S3 test speak the same dialect.
//
// The client is built from [Config] alone: no environment variables, shared
// config files or instance metadata are consulted, so a skillgate process
// talks to exactly the endpoint and credentials it was given.
//
// Object storage is flat, so unlike the local store "a" and "a/b" may both be
// objects; callers that need a hierarchy (the vfs) check for clashes
// themselves. Some servers with a POSIX backend (versitygw) refuse such
// clashes; those refusals are reported as [blob.ErrConflict].
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

// DefaultMaxObjectSize is the largest object a Store reads or writes unless
// [Config.MaxObjectSize] says otherwise. Put buffers the object in memory
// (a signed request over plain HTTP needs a seekable body), so keep it modest.
const DefaultMaxObjectSize = 64 << 20

// Config says where the objects live. Endpoint, Bucket, AccessKey and
// SecretKey are required.
type Config struct {
	// Endpoint is the server's base URL, e.g. "http://127.0.0.1:7070".
	Endpoint string
	// Region is the signing region; empty means "us-east-1".
	Region string
	// Bucket holds the objects.
	Bucket string
	// AccessKey and SecretKey are the static credentials.
	AccessKey string
	SecretKey string
	// Prefix is prepended to every key, e.g. "prod/" to share a bucket. It is
	// "" or a valid key followed by "/".
	Prefix string
	// MaxObjectSize bounds every object read or written, in bytes; zero means
	// DefaultMaxObjectSize.
	MaxObjectSize int64
	// HTTPClient is used for requests; nil means the SDK's default client.
	HTTPClient *http.Client
}

// Store is a [blob.Store] over one bucket (and optional key prefix). It is
// safe for concurrent use.
type Store struct {
	client  *awss3.Client
	bucket  string
	prefix  string
	maxSize int64
}

var (
	_ blob.Store     = (*Store)(nil)
	_ blob.DirLister = (*Store)(nil)
)

// New returns a Store for cfg. It does not contact the server; the first
// operation does. The error names the missing or invalid field.
func New(cfg Config) (*Store, error) {
	switch {
	case cfg.Endpoint == "":
		return nil, errors.New("s3: config: endpoint is required")
	case cfg.Bucket == "":
		return nil, errors.New("s3: config: bucket is required")
	case cfg.AccessKey == "" || cfg.SecretKey == "":
		return nil, errors.New("s3: config: access key and secret key are required")
	}
	if err := blob.ValidatePrefix(cfg.Prefix); err != nil {
		return nil, fmt.Errorf("s3: config: prefix: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.MaxObjectSize <= 0 {
		cfg.MaxObjectSize = DefaultMaxObjectSize
	}
	creds := aws.Credentials{AccessKeyID: cfg.AccessKey, SecretAccessKey: cfg.SecretKey, Source: "skillgate"}
	opts := awss3.Options{
		Region:       cfg.Region,
		BaseEndpoint: aws.String(cfg.Endpoint),
		UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return creds, nil
		}),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if cfg.HTTPClient != nil {
		opts.HTTPClient = cfg.HTTPClient
	}
	return &Store{
		client:  awss3.New(opts),
		bucket:  cfg.Bucket,
		prefix:  cfg.Prefix,
		maxSize: cfg.MaxObjectSize,
	}, nil
}

// mapErr translates SDK errors into the blob sentinels.
func mapErr(op, key string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("s3: %s %q: %w", op, key, err)
	}
	var (
		noKey    *types.NoSuchKey
		notFound *types.NotFound
		respErr  *awshttp.ResponseError
		apiErr   smithy.APIError
	)
	switch {
	case errors.As(err, &noKey), errors.As(err, &notFound):
		return fmt.Errorf("%w: %q", blob.ErrNotFound, key)
	case errors.As(err, &apiErr) && isConflictCode(apiErr.ErrorCode()):
		return fmt.Errorf("%w: %q: %s", blob.ErrConflict, key, apiErr.ErrorMessage())
	case errors.As(err, &respErr) && respErr.HTTPStatusCode() == http.StatusNotFound:
		if errors.As(err, &apiErr) && apiErr.ErrorCode() == "NoSuchBucket" {
			return fmt.Errorf("s3: %s %q: %w", op, key, err)
		}
		return fmt.Errorf("%w: %q", blob.ErrNotFound, key)
	}
	return fmt.Errorf("s3: %s %q: %w", op, key, err)
}

// isConflictCode reports the codes POSIX-backed servers use when a key
// clashes with a directory (versitygw: ObjectParentIsFile, ExistingObjectIsDirectory).
func isConflictCode(code string) bool {
	switch code {
	case "ObjectParentIsFile", "ExistingObjectIsDirectory", "DirectoryObjectContainsData":
		return true
	}
	return false
}

func infoOf(key string, size *int64, mod *time.Time, etag *string) blob.Info {
	in := blob.Info{Key: key, Size: aws.ToInt64(size), ETag: aws.ToString(etag)}
	if mod != nil {
		in.ModTime = *mod
	}
	return in
}

// Stat implements [blob.Store.Stat] with HeadObject.
func (s *Store) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := blob.ValidateKey(key); err != nil {
		return blob.Info{}, err
	}
	out, err := s.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &s.bucket, Key: aws.String(s.prefix + key)})
	if err != nil {
		return blob.Info{}, mapErr("stat", key, err)
	}
	return infoOf(key, out.ContentLength, out.LastModified, out.ETag), nil
}

// Get implements [blob.Store.Get] with GetObject; the body is refused with
// ErrTooLarge before it is read when its length is over the limit.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	if err := blob.ValidateKey(key); err != nil {
		return nil, blob.Info{}, err
	}
	out, err := s.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.prefix + key)})
	if err != nil {
		return nil, blob.Info{}, mapErr("get", key, err)
	}
	info := infoOf(key, out.ContentLength, out.LastModified, out.ETag)
	if info.Size > s.maxSize {
		out.Body.Close()
		return nil, info, fmt.Errorf("%w: %q is %d bytes, limit %d", blob.ErrTooLarge, key, info.Size, s.maxSize)
	}
	return out.Body, info, nil
}

// List implements [blob.Store.List] with ListObjectsV2 pages. Directory
// marker objects (keys ending in "/") and keys that are not valid blob keys
// are skipped.
func (s *Store) List(ctx context.Context, prefix string, limit int) ([]blob.Info, error) {
	if err := blob.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	var out []blob.Info
	err := s.list(ctx, prefix, "", func(obj types.Object, _ string) bool {
		key := strings.TrimPrefix(aws.ToString(obj.Key), s.prefix)
		if blob.ValidateKey(key) != nil {
			return true
		}
		out = append(out, infoOf(key, obj.Size, obj.LastModified, obj.ETag))
		return limit <= 0 || len(out) < limit
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b blob.Info) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// ListDir implements [blob.DirLister] with ListObjectsV2 and the "/"
// delimiter.
func (s *Store) ListDir(ctx context.Context, prefix string, limit int) (blob.Dir, error) {
	if err := blob.ValidatePrefix(prefix); err != nil {
		return blob.Dir{}, err
	}
	var d blob.Dir
	full := s.prefix + prefix
	err := s.list(ctx, prefix, "/", func(obj types.Object, dir string) bool {
		if dir != "" {
			name := strings.TrimSuffix(strings.TrimPrefix(dir, full), "/")
			if name != "" && blob.ValidateKey(prefix+name) == nil {
				d.Dirs = append(d.Dirs, name)
			}
		} else {
			key := strings.TrimPrefix(aws.ToString(obj.Key), s.prefix)
			if blob.ValidateKey(key) == nil {
				d.Files = append(d.Files, infoOf(key, obj.Size, obj.LastModified, obj.ETag))
			}
		}
		return limit <= 0 || len(d.Files)+len(d.Dirs) < limit
	})
	if err != nil {
		return blob.Dir{}, err
	}
	slices.SortFunc(d.Files, func(a, b blob.Info) int { return strings.Compare(a.Key, b.Key) })
	slices.Sort(d.Dirs)
	return d, nil
}

// list pages through ListObjectsV2 calling fn for each object (dir == "") and
// each common prefix (dir != ""), until fn returns false or the listing ends.
func (s *Store) list(ctx context.Context, prefix, delimiter string, fn func(obj types.Object, dir string) bool) error {
	in := &awss3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(s.prefix + prefix)}
	if delimiter != "" {
		in.Delimiter = aws.String(delimiter)
	}
	p := awss3.NewListObjectsV2Paginator(s.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return mapErr("list", prefix, err)
		}
		// Objects and common prefixes are merged in key order so a limit
		// cuts the same entries a hierarchical store would.
		objs, dirs := page.Contents, page.CommonPrefixes
		for len(objs) > 0 || len(dirs) > 0 {
			var more bool
			switch {
			case len(dirs) == 0 || len(objs) > 0 && aws.ToString(objs[0].Key) < aws.ToString(dirs[0].Prefix):
				o := objs[0]
				objs = objs[1:]
				if strings.HasSuffix(aws.ToString(o.Key), "/") {
					continue // directory marker
				}
				more = fn(o, "")
			default:
				d := dirs[0]
				dirs = dirs[1:]
				more = fn(types.Object{}, aws.ToString(d.Prefix))
			}
			if !more {
				return nil
			}
		}
	}
	return nil
}

// Put implements [blob.Store.Put] with one PutObject. The body is read into
// memory first: SigV4 over plain HTTP signs the payload hash, which needs a
// seekable body of known length, and reading first lets a short or long
// reader be refused before anything is sent. S3 replaces objects atomically.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := blob.ValidateKey(key); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("%w: %q: negative size %d", blob.ErrSizeMismatch, key, size)
	}
	if size > s.maxSize {
		return fmt.Errorf("%w: %q is %d bytes, limit %d", blob.ErrTooLarge, key, size, s.maxSize)
	}
	buf := make([]byte, size)
	if n, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: %q: reader gave %d bytes, declared %d", blob.ErrSizeMismatch, key, n, size)
		}
		return fmt.Errorf("s3: put %q: read body: %w", key, err)
	}
	var one [1]byte
	if k, _ := io.ReadFull(r, one[:]); k > 0 {
		return fmt.Errorf("%w: %q: reader gave more than the declared %d bytes", blob.ErrSizeMismatch, key, size)
	}
	_, err := s.client.PutObject(ctx, &awss3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           aws.String(s.prefix + key),
		Body:          bytes.NewReader(buf),
		ContentLength: aws.Int64(size),
	})
	if err != nil {
		return mapErr("put", key, err)
	}
	return nil
}

// Delete implements [blob.Store.Delete] with DeleteObject, which S3 already
// makes idempotent.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := blob.ValidateKey(key); err != nil {
		return err
	}
	_, err := s.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &s.bucket, Key: aws.String(s.prefix + key)})
	if err != nil {
		if err := mapErr("delete", key, err); errors.Is(err, blob.ErrNotFound) {
			return nil
		}
		return mapErr("delete", key, err)
	}
	return nil
}
