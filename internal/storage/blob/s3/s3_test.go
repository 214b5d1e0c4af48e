package s3_test

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/blobtest"
	"github.com/skillgate/skillgate/internal/storage/blob/s3"
)

// testConfig returns the S3 server started by scripts/setup-s3.sh, or skips
// the test when SKILLGATE_TEST_S3_ENDPOINT is unset.
func testConfig(t testing.TB) s3.Config {
	t.Helper()
	endpoint := os.Getenv("SKILLGATE_TEST_S3_ENDPOINT")
	if endpoint == "" {
		t.Skip("SKILLGATE_TEST_S3_ENDPOINT is unset; run `eval \"$(scripts/setup-s3.sh)\"` to test against a real S3 server")
	}
	return s3.Config{
		Endpoint:      endpoint,
		Region:        os.Getenv("SKILLGATE_TEST_S3_REGION"),
		Bucket:        os.Getenv("SKILLGATE_TEST_S3_BUCKET"),
		AccessKey:     os.Getenv("SKILLGATE_TEST_S3_ACCESS_KEY"),
		SecretKey:     os.Getenv("SKILLGATE_TEST_S3_SECRET_KEY"),
		MaxObjectSize: blobtest.MaxObjectSize,
	}
}

// newStore returns a store over a fresh random prefix of the test bucket, so
// that parallel tests each see an empty store.
func newStore(t testing.TB) blob.Store {
	t.Helper()
	cfg := testConfig(t)
	cfg.Prefix = "test-" + strings.ToLower(rand.Text()) + "/"
	st, err := s3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		infos, _ := st.List(ctx, "", 0)
		for _, in := range infos {
			_ = st.Delete(ctx, in.Key)
		}
	})
	return st
}

func TestConformance(t *testing.T) {
	testConfig(t)
	blobtest.TestStore(t, newStore)
}

func TestConfigErrors(t *testing.T) {
	base := s3.Config{Endpoint: "http://127.0.0.1:1", Bucket: "b", AccessKey: "a", SecretKey: "s"}
	tests := []struct {
		name string
		edit func(*s3.Config)
		want string
	}{
		{"no endpoint", func(c *s3.Config) { c.Endpoint = "" }, "s3: config: endpoint is required"},
		{"no bucket", func(c *s3.Config) { c.Bucket = "" }, "s3: config: bucket is required"},
		{"no secret", func(c *s3.Config) { c.SecretKey = "" }, "s3: config: access key and secret key are required"},
		{"bad prefix", func(c *s3.Config) { c.Prefix = "no-slash" }, `s3: config: prefix: blob: invalid key: prefix "no-slash" must be empty or end with a slash`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			tc.edit(&cfg)
			_, err := s3.New(cfg)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("New = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := s3.New(base); err != nil {
		t.Fatalf("New(valid) = %v", err)
	}
}

func TestWrongCredentials(t *testing.T) {
	cfg := testConfig(t)
	cfg.SecretKey = "wrong-secret"
	st, err := s3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Stat(context.Background(), "anything")
	if err == nil || errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Stat with a wrong secret = %v, want an authentication error", err)
	}
}

func TestMissingBucket(t *testing.T) {
	cfg := testConfig(t)
	cfg.Bucket = "no-such-bucket-" + strings.ToLower(rand.Text())
	st, err := s3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = st.Get(context.Background(), "k")
	if err == nil || errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Get from a missing bucket = %v, want a configuration error, not ErrNotFound", err)
	}
}
