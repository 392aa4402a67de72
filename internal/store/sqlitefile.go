// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
)

// sqliteFile is what the stores of this process opened on one SQLite file share: a
// collector opens the file two or three times (the agenteval exporter's store, the
// agentsession processor's continuation store, the receiver's channel). They share one
// database/sql pool, and every write of the file runs under one lock on one connection
// (conn). SQLite lets one writer in at a time; a writer that finds the file locked waits
// in SQLite's busy handler, which sleeps 1, 2, 5, 10 ... up to 100 ms between tries and
// so wakes late, up to 100 ms after the lock was freed: writers of this process queue on
// lock instead and go in as soon as the one before commits (busy_timeout still covers
// other processes). One connection for the writes keeps its page cache valid from one
// write to the next: in WAL mode a connection that finds the file changed by another
// connection since its last transaction drops its whole cache, and with the writes spread
// over the pool's connections (the exporter's batches, the continuation store's turns),
// nearly every write transaction began by freeing and reloading the pages the last one
// had cached (docs/decisions/performance.md §8.61).
type sqliteFile struct {
	path string // absolute, symbolic links resolved: the key in sqliteFiles
	db   *sql.DB
	lock writeLock
	// conn is the connection every write runs on, taken under lock: nil before the first
	// write and after a write found it broken.
	conn *sql.Conn
	refs int // stores open on the file; under sqliteFiles.mu
}

// sqliteFiles holds the SQLite files open in this process, by path (sqliteFile.path).
var sqliteFiles = struct {
	mu sync.Mutex
	m  map[string]*sqliteFile
}{m: map[string]*sqliteFile{}}

// openSQLiteFile returns a store on the SQLite file at path, which exists
// (sqliteConnString created it; conn is its connection string): on the file's shared
// pool when a store of this process has it open, else on a new pool, connected and
// migrated. The file is known by its absolute path with symbolic links resolved, so that
// two spellings of one file share it. The pool is opened outside sqliteFiles.mu (a
// migration may wait up to busy_timeout for another process); of two stores opening one
// file at once, the second to finish closes its pool and takes the first's.
func openSQLiteFile(ctx context.Context, d *dialect, path, conn string) (Store, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if f := sharedSQLiteFile(path, nil); f != nil {
		return &sqlStore{db: f.db, d: d, file: f}, nil
	}
	db, err := openDB(ctx, d, conn)
	if err != nil {
		return nil, err
	}
	f := sharedSQLiteFile(path, db)
	if f.db != db {
		_ = db.Close()
	}
	return &sqlStore{db: f.db, d: d, file: f}, nil
}

// sharedSQLiteFile counts a new store on the file at path and returns it: the one open in
// this process, or, when none is and db is not nil, a new one on db; nil when none is
// and db is nil.
func sharedSQLiteFile(path string, db *sql.DB) *sqliteFile {
	sqliteFiles.mu.Lock()
	defer sqliteFiles.mu.Unlock()
	f := sqliteFiles.m[path]
	if f == nil {
		if db == nil {
			return nil
		}
		f = &sqliteFile{path: path, db: db, lock: make(writeLock, 1)}
		sqliteFiles.m[path] = f
	}
	f.refs++
	return f
}

// release is a store's Close of f: the last one closes the write connection and the
// pool.
func (f *sqliteFile) release() error {
	sqliteFiles.mu.Lock()
	f.refs--
	last := f.refs == 0
	if last {
		delete(sqliteFiles.m, f.path)
	}
	sqliteFiles.mu.Unlock()
	if !last {
		return nil
	}
	_ = f.lock.lock(context.Background()) // no store is left to write: wait for a write in progress
	defer f.lock.unlock()
	var err error
	if f.conn != nil {
		err = f.conn.Close()
		f.conn = nil
	}
	return errors.Join(err, f.db.Close()) // a write after it fails: the pool is closed
}

// write runs fn on the file's write connection under its lock. A connection that turns
// out broken (the driver's ErrBadConn, after which database/sql closes it: ErrConnDone)
// is replaced, and fn run once more on the new one: database/sql returns either only
// when the statement did not run. After any other error the connection is given back to
// the pool before the lock is released, and the next write takes another: a transaction
// whose context ended is rolled back by database/sql in the background, after Commit or
// Begin has returned the context's error, and a BEGIN on the same connection before that
// rollback fails ("cannot start a transaction within a transaction"). Giving the
// connection back waits for the rollback (sql.Conn.Close waits for its transaction).
func (f *sqliteFile) write(ctx context.Context, fn func(writeConn) error) error {
	if err := f.lock.lock(ctx); err != nil {
		return err
	}
	defer f.lock.unlock()
	for attempt := 0; ; attempt++ {
		if f.conn == nil {
			c, err := f.db.Conn(ctx)
			if err != nil {
				return fmt.Errorf("write connection: %w", err)
			}
			f.conn = c
		}
		err := fn(f.conn)
		if err == nil {
			return nil
		}
		_ = f.conn.Close()
		f.conn = nil
		if attempt > 0 || !errors.Is(err, sql.ErrConnDone) && !errors.Is(err, driver.ErrBadConn) {
			return err
		}
	}
}

// writeConn is what a write runs its statements on: the SQLite file's write connection
// (*sql.Conn) or, on PostgreSQL, the pool (*sql.DB).
type writeConn interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// writeLock is a lock whose waiters give up when their context ends (a one-slot
// semaphore).
type writeLock chan struct{}

// lock takes l, or returns ctx's error once ctx ends first.
func (l writeLock) lock(ctx context.Context) error {
	select {
	case l <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l writeLock) unlock() { <-l }
