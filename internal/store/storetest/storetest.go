// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package storetest gives tests a PostgreSQL database of their own for the result store.
package storetest // import "github.com/agenteval/agenteval-collector/internal/store/storetest"

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx database/sql driver
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// PostgresDSNEnv names the PostgreSQL test database.
const PostgresDSNEnv = "AGENTEVAL_TEST_POSTGRES_DSN"

var schemas atomic.Int64

// PostgresDSN returns a DSN of the test database (PostgresDSNEnv) whose search_path is
// a schema of its own, dropped when t ends. Without PostgresDSNEnv the test is skipped,
// or fails when CI=true: PostgreSQL tests must run in CI.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresDSNEnv)
	if base == "" {
		how, fail := MissingPostgres()
		if fail {
			t.Fatal("PostgreSQL tests must run in CI: " + how)
		}
		t.Skip("skipping PostgreSQL tests: " + how)
	}
	schema := fmt.Sprintf("agenteval_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemas.Add(1))
	admin, err := sql.Open("pgx", base)
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	_, err = admin.Exec("CREATE SCHEMA " + schema)
	require.NoError(t, err, "create test schema")
	t.Cleanup(func() {
		_, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		assert.NoError(t, err, "drop test schema")
	})
	return withSearchPath(t, base, schema)
}

// MissingPostgres says how to set PostgresDSNEnv when it is not set, and whether its
// absence is a failure: under CI=true the PostgreSQL tests and fault scenarios must run.
func MissingPostgres() (how string, fail bool) {
	return PostgresDSNEnv + ` is not set; start a local server and set it with: ` +
		`export ` + PostgresDSNEnv + `="$(internal/store/testdata/start-postgres.sh)" (as root)`, os.Getenv("CI") == "true"
}

// withSearchPath adds search_path=schema to a URL or key=value DSN.
func withSearchPath(t testing.TB, dsn, schema string) string {
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		require.NoError(t, err)
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}
