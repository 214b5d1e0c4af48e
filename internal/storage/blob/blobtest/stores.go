package blobtest

import (
	"context"
	"crypto/rand"
	"os"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/blob/s3"
)

// EnvS3Endpoint names the S3 server the tests run against (started by
// scripts/setup-s3.sh, which also exports SKILLGATE_TEST_S3_BUCKET,
// _REGION, _ACCESS_KEY and _SECRET_KEY).
const EnvS3Endpoint = "SKILLGATE_TEST_S3_ENDPOINT"

// Local returns a store in a temporary directory, closed when tb ends.
func Local(tb testing.TB) blob.Store {
	tb.Helper()
	st, err := local.Open(tb.TempDir(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// S3 returns a fresh prefix ("NAME-RANDOM/") of the test bucket, emptied
// when tb ends, or skips tb when no S3 server is configured.
func S3(tb testing.TB, name string) blob.Store {
	tb.Helper()
	endpoint := os.Getenv(EnvS3Endpoint)
	if endpoint == "" {
		tb.Skip(EnvS3Endpoint + " is unset; run `eval \"$(scripts/setup-s3.sh)\"` to test against a real S3 server")
	}
	st, err := s3.New(s3.Config{
		Endpoint: endpoint, Region: os.Getenv("SKILLGATE_TEST_S3_REGION"), Bucket: os.Getenv("SKILLGATE_TEST_S3_BUCKET"),
		AccessKey: os.Getenv("SKILLGATE_TEST_S3_ACCESS_KEY"), SecretKey: os.Getenv("SKILLGATE_TEST_S3_SECRET_KEY"),
		Prefix: name + "-" + strings.ToLower(rand.Text()) + "/",
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx := context.Background()
		all, _ := st.List(ctx, "", 0)
		for _, in := range all {
			_ = st.Delete(ctx, in.Key)
		}
	})
	return st
}

// Stores are the two stores a test runs against, by name: "local", and
// "s3" (a fresh prefix named for name, skipped without a server).
func Stores(name string) map[string]func(t *testing.T) blob.Store {
	return map[string]func(t *testing.T) blob.Store{
		"local": func(t *testing.T) blob.Store { return Local(t) },
		"s3":    func(t *testing.T) blob.Store { return S3(t, name) },
	}
}
