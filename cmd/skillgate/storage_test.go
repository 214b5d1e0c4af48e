package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestStorageConfigErrors checks the messages of a misconfigured bucket
// and of storage settings out of range.
func TestStorageConfigErrors(t *testing.T) {
	env := map[string]string{"SKILLGATE_S3_ACCESS_KEY": "a", "SKILLGATE_S3_SECRET_KEY": "s"}
	for _, tc := range []struct {
		name, yaml string
		args       []string
		code       int
		errs       string
	}{
		{"library store", "tenant_libraries:\n  store: gcs\n", nil, 2,
			"Error: tenant_libraries.store must be s3 (or left out), not \"gcs\"\n"},
		{"no bucket", "tenant_libraries:\n  store: s3\n", nil, 2,
			"Error: the bucket: s3: config: endpoint is required (set --s3-endpoint and --s3-bucket, SKILLGATE_S3_*, or s3: in the configuration; credentials come from SKILLGATE_S3_ACCESS_KEY and SKILLGATE_S3_SECRET_KEY)\n"},
		{"mirror without a bucket", "", []string{"--mirror-s3"}, 2,
			"Error: the bucket: s3: config: endpoint is required (set --s3-endpoint and --s3-bucket, SKILLGATE_S3_*, or s3: in the configuration; credentials come from SKILLGATE_S3_ACCESS_KEY and SKILLGATE_S3_SECRET_KEY)\n"},
		{"bad tenant", "s3: {endpoint: 'http://127.0.0.1:1', bucket: b}\ntenant_libraries:\n  store: s3\n  tenants: [_global]\n", nil, 2,
			"Error: tenant_libraries: library: tenants: tenant \"_global\" must be letters, digits, '.', '_' and '-', starting with a letter or digit\n"},
		{"bad prefix", "s3: {endpoint: 'http://127.0.0.1:1', bucket: b, prefix: nope}\ntenant_libraries:\n  store: s3\n", nil, 2,
			"Error: the bucket: s3: config: prefix: blob: invalid key: prefix \"nope\" must be empty or end with a slash (set --s3-endpoint and --s3-bucket, SKILLGATE_S3_*, or s3: in the configuration; credentials come from SKILLGATE_S3_ACCESS_KEY and SKILLGATE_S3_SECRET_KEY)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			m := &Main{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
				if k == "SKILLGATE_DATA" {
					return data
				}
				return env[k]
			}}
			code := m.Run(context.Background(), append([]string{"scan", "--root", t.TempDir()}, tc.args...))
			if code != tc.code || errb.String() != tc.errs {
				t.Errorf("exit %d, stderr %q\nwant exit %d, %q", code, errb.String(), tc.code, tc.errs)
			}
		})
	}
}
