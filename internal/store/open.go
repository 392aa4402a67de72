// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// Drivers accepted by Open.
const (
	// DriverSQLite is the embedded store (modernc.org/sqlite, pure Go); the DSN is a
	// file path.
	DriverSQLite = "sqlite"
	// DriverPostgres is PostgreSQL through pgx; the DSN is a pgx connection string
	// (URL "postgres://user:pass@host:5432/db?sslmode=disable" or "key=value ...").
	DriverPostgres = "postgres"
)

// Drivers returns the drivers Open accepts, for configuration errors.
func Drivers() []string { return []string{DriverSQLite, DriverPostgres} }

// ValidDriver reports whether Open accepts driver.
func ValidDriver(driver string) bool { return slices.Contains(Drivers(), driver) }

// ValidateDSN parses a PostgreSQL dsn as Open's driver will (pgx.ParseConfig: no
// connection is made, but the PG* environment, a passfile and the TLS files the DSN names
// are read, as at start) and returns why it cannot be parsed, without echoing it (it may
// hold a password); nil for another driver, whose DSN is checked by Open.
func ValidateDSN(driver, dsn string) error {
	if driver != DriverPostgres {
		return nil
	}
	_, err := pgx.ParseConfig(dsn)
	if err == nil {
		return nil
	}
	msg := "not a PostgreSQL DSN (a URL postgres://user:pass@host:5432/db, or key=value pairs)"
	cause := errors.Unwrap(err)
	if ue := (*url.Error)(nil); errors.As(cause, &ue) {
		cause = ue.Err // url.Error quotes the URL
	}
	if cause != nil {
		return fmt.Errorf("%s: %w", msg, cause)
	}
	return errors.New(msg)
}

// versionTable is goose's bookkeeping table. It is named after the project so that a
// PostgreSQL database shared with other goose users keeps the histories apart.
const versionTable = "agenteval_schema_migrations"

// migrationLockID is the PostgreSQL advisory lock that serialises migrations when
// several collectors share one database (docs/architecture.md §10); any constant unique to us.
const migrationLockID = 0x6167656e7465 // "agente"

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// sqliteTimeLayout is how timestamps are stored in SQLite: UTC, nine fractional digits,
// so that text order is time order and nanoseconds survive.
const sqliteTimeLayout = "2006-01-02T15:04:05.000000000Z"

// sqlitePragmas are set on every SQLite connection: WAL (readers do not block the
// writer), a 10 s busy timeout (writers queue instead of failing with SQLITE_BUSY),
// foreign keys (ON DELETE CASCADE for retention), synchronous=NORMAL (the usual WAL
// setting: durable across crashes of the process, may lose the last commits on power
// loss). _txlock=immediate takes the write lock at BEGIN, so that two writers never
// deadlock on a lock upgrade. temp_store=MEMORY keeps statement journals (and temporary
// tables) in memory in small chunks: with the default, every statement of a batched
// write that rewrites a page already changed in its transaction opened a 64 KiB
// in-memory journal chunk, which the pure-Go SQLite allocates and frees with mmap and
// munmap (a third of a batch's CPU; docs/decisions/performance.md §8.8). cache_spill(-16384)
// lets a write transaction keep up to 16 MiB of dirty pages in its page cache before it
// spills any to the WAL: with the default (spill once the 2 MB cache is full), an
// exporter batch of some 100 analyses wrote pages to the WAL before its commit, wrote
// them again at the commit and rewrote the checksums of every frame after the first
// rewritten one (docs/decisions/performance.md §8.29). cache_size(-16384) lets the page
// cache keep those 16 MiB between transactions: with the default (2 MB), every commit of
// a large batch freed the pages above it, and the pure-Go SQLite's allocator handed them
// back to the kernel (madvise) only to fault them in again at the next batch, 4% of the
// full pipeline's CPU and a tenth of it in all (performance.md §8.61). It is a bound per
// connection: the writer's cache reaches it, readers' caches grow only as far as what
// they read. What a commit makes durable, and when, does not change. The page size is set
// when the database is created (sqlitePageSize, createSQLite).
const sqlitePragmas = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)" +
	"&_pragma=synchronous(NORMAL)&_pragma=temp_store(MEMORY)&_pragma=cache_spill(-16384)&_pragma=cache_size(-16384)&_txlock=immediate"

// sqlitePageSize is the page size of a database the store creates: 16 KiB instead of
// SQLite's 4 KiB default. A stored turn result (about 6.5 KB) or analysis document
// (about 3 KB) then fits its table's page instead of spilling into an overflow page of
// its own, and a batch's commit writes a quarter as many WAL frames (each a system call
// or two in the pure-Go SQLite): 12–14% less CPU per saved analysis in the store
// benchmarks. The file is 8–10% smaller for the golden analyses, 9% larger for the e2e
// benchmark's, whose 7 KB turn results leave a fifth of each page unused
// (docs/decisions/performance.md §8.29).
// A database created before keeps its page size: SQLite cannot change it in WAL mode.
const sqlitePageSize = 16384

// dialect is what differs between the two databases in the Go code: placeholders and
// how a timestamp is passed. The upsert (INSERT ... ON CONFLICT ... DO UPDATE SET
// col = excluded.col) and every other statement are the same text for both.
type dialect struct {
	name      string // DriverSQLite or DriverPostgres, for error messages
	sqlDriver string // database/sql driver name
	goose     goose.Dialect
	// numbered is true for $1, $2... placeholders (PostgreSQL); statements are written
	// with ? and rebound.
	numbered bool
	// lockedTx: a write transaction holds the database's write lock from BEGIN
	// (SQLite with _txlock=immediate), so what it reads no other writer changes before
	// it commits. PostgreSQL (read committed) gives no such guarantee.
	lockedTx bool
	// timeArg converts a timestamp to the value bound for a timestamp column.
	timeArg func(time.Time) any
	// oneRowInserts: a save inserts its child rows one row a statement (SQLite), not
	// in multi-row INSERTs. A multi-row INSERT into a table with a foreign or unique key may
	// fail after some of its rows, so SQLite keeps a statement journal for it (a
	// copy of every page it changes that the transaction had changed before, 16 KiB
	// each); a one-row INSERT cannot, and needs none. Its compiled statement is kept
	// for the transaction (txStmts), so one row a statement costs no compilation more
	// (docs/decisions/performance.md §8.38). PostgreSQL keeps multi-row INSERTs: one
	// round trip a table.
	oneRowInserts bool
	// migrations is the dialect's directory in the migrations FS.
	migrations string
}

var (
	sqliteDialect = &dialect{
		name:          DriverSQLite,
		sqlDriver:     "sqlite",
		goose:         goose.DialectSQLite3,
		lockedTx:      true,
		timeArg:       func(t time.Time) any { return t.UTC().Format(sqliteTimeLayout) },
		oneRowInserts: true,
		migrations:    "migrations/sqlite",
	}
	postgresDialect = &dialect{
		name:       DriverPostgres,
		sqlDriver:  "pgx",
		goose:      goose.DialectPostgres,
		numbered:   true,
		timeArg:    func(t time.Time) any { return t.UTC() },
		migrations: "migrations/postgres",
	}
)

// rebind rewrites the ? placeholders of q for the dialect. Statements in this package
// contain no ? other than placeholders.
func (d *dialect) rebind(q string) string {
	if !d.numbered || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] != '?' {
			b.WriteByte(q[i])
			continue
		}
		n++
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// Open opens (creating if needed) and migrates the store (docs/architecture.md §7).
//
// driver is "sqlite" (dsn = a file path, e.g. "./data/agenteval.db"; the parent
// directory is created; WAL mode) or "postgres" (dsn = a pgx DSN or URL; the database
// must exist). Pending migrations are applied before Open returns; on PostgreSQL they
// run under an advisory lock, so several collectors may start at once against one
// database. Errors name the driver and the step that failed; a PostgreSQL DSN is never
// echoed (it may hold a password).
func Open(ctx context.Context, driver, dsn string) (Store, error) {
	var (
		d    *dialect
		conn string
	)
	switch driver {
	case DriverSQLite:
		d = sqliteDialect
		var err error
		if conn, err = sqliteConnString(dsn); err != nil {
			return nil, fmt.Errorf("store: sqlite: %w", err)
		}
	case DriverPostgres:
		d = postgresDialect
		if strings.TrimSpace(dsn) == "" {
			return nil, errors.New("store: postgres: empty DSN")
		}
		conn = dsn
	default:
		return nil, fmt.Errorf("store: unknown driver %q (want %q or %q)", driver, DriverSQLite, DriverPostgres)
	}

	if driver == DriverSQLite {
		return openSQLiteFile(ctx, d, dsn, conn)
	}
	db, err := openDB(ctx, d, conn)
	if err != nil {
		return nil, err
	}
	return &sqlStore{db: db, d: d}, nil
}

// openDB opens a database/sql pool with conn, checks that it connects and migrates the
// database.
func openDB(ctx context.Context, d *dialect, conn string) (*sql.DB, error) {
	db, err := sql.Open(d.sqlDriver, conn)
	if err != nil {
		return nil, fmt.Errorf("store: %s: open: %w", d.name, err)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: %s: connect: %w", d.name, err)
	}
	if err := migrate(ctx, db, d); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: %s: migrate: %w", d.name, err)
	}
	return db, nil
}

// sqliteConnString validates the path, creates its directory and a missing database
// (createSQLite), and appends the pragmas.
func sqliteConnString(path string) (string, error) {
	switch {
	case path == "":
		return "", errors.New("empty database path")
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		// An in-memory database is private to one connection of the pool, and a URI
		// would bypass our pragmas: both would break the store's guarantees.
		return "", fmt.Errorf("database path %q: want a file path", path)
	case strings.ContainsAny(path, "?#"):
		return "", fmt.Errorf("database path %q: '?' and '#' are not allowed", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return "", fmt.Errorf("create directory for %s: %w", path, err)
	}
	if err := createSQLite(path); err != nil {
		return "", fmt.Errorf("create %s: %w", path, err)
	}
	return path + "?" + sqlitePragmas, nil
}

// createSQLite creates the database at path with sqlitePageSize pages and in WAL mode,
// unless the file exists and is not empty. The page size must be set before the first
// write fixes it, that is before journal_mode=WAL, which the driver applies ahead of any
// page_size in the connection string (it sorts its _pragma list by name). Two processes
// creating one database at once both ask for the same page size and mode.
func createSQLite(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		return nil
	}
	db, err := sql.Open(sqliteDialect.sqlDriver, path)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1) // the page size is a setting of the connection that creates the file
	for _, pragma := range []string{
		"PRAGMA busy_timeout = 10000", // another process may be creating it too
		fmt.Sprintf("PRAGMA page_size = %d", sqlitePageSize),
		"PRAGMA journal_mode = WAL",
	} {
		if _, err := db.Exec(pragma); err != nil {
			_ = db.Close()
			return fmt.Errorf("%s: %w", pragma, err)
		}
	}
	return db.Close()
}

// migrate applies the dialect's pending migrations with goose.
func migrate(ctx context.Context, db *sql.DB, d *dialect) error {
	return migrateTo(ctx, db, d, goose.MaxVersion)
}

// migrateTo applies the dialect's pending migrations up to version (tests build a
// database of an older schema with it).
func migrateTo(ctx context.Context, db *sql.DB, d *dialect, version int64) error {
	fsys, err := fs.Sub(migrations, d.migrations)
	if err != nil {
		return err
	}
	opts := []goose.ProviderOption{
		goose.WithTableName(versionTable),
		goose.WithDisableGlobalRegistry(true), // SQL files only, no Go migrations from other packages
	}
	if d.numbered { // PostgreSQL: serialise concurrent migrators
		locker, err := lock.NewPostgresSessionLocker(
			lock.WithLockID(migrationLockID),
			lock.WithLockTimeout(1, 300), // poll every second, give up after 5 minutes
		)
		if err != nil {
			return err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(d.goose, db, fsys, opts...)
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}
