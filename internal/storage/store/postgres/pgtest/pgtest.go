// Package pgtest gives tests a database of their own on the PostgreSQL
// server that SKILLGATE_TEST_POSTGRES names (scripts/setup-postgres.sh
// starts one and prints the variable). Tests that need one skip when the
// variable is unset.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN is the variable naming the test server: a postgres:// URL of a
// role that may create databases.
const EnvDSN = "SKILLGATE_TEST_POSTGRES"

// Available reports whether a test server is configured.
func Available() bool { return os.Getenv(EnvDSN) != "" }

// NewDatabase creates an empty database with a unique name on the test
// server, drops it when t ends, and returns its DSN. It skips t when
// SKILLGATE_TEST_POSTGRES is unset.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvDSN)
	if admin == "" {
		t.Skip(EnvDSN + " is not set (eval \"$(scripts/setup-postgres.sh)\" starts a server)")
	}
	dsn, drop, err := Create(context.Background(), admin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	return dsn
}

// Create creates an empty database with a unique name on the server admin
// names, and returns its DSN and a function that drops it (closing any
// connection still open to it).
func Create(ctx context.Context, admin string) (dsn string, drop func() error, err error) {
	u, err := url.Parse(admin)
	if err != nil {
		return "", nil, err
	}
	var b [8]byte
	rand.Read(b[:])
	name := "skillgate_test_" + hex.EncodeToString(b[:])
	if err := exec(ctx, admin, `CREATE DATABASE `+name); err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	drop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return exec(ctx, admin, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	}
	return u.String(), drop, nil
}

// exec runs one statement on a connection of its own.
func exec(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}
