// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the result store's PostgreSQL driver

	"github.com/agenteval/agenteval-collector/internal/store/storetest"
)

// outageRetry is the agenteval exporter's retry_on_failure in the store-outage
// scenarios: steps of 200ms growing by 1.5 to 1s, never giving up, so that an outage of a
// few seconds spans every step (with the defaults, 5s to 30s, it would take minutes).
const outageRetry = "{initial_interval: 200ms, max_interval: 1s, max_elapsed_time: 0}"

// storeOutages runs the store-outage scenarios against the built collector with its
// result store on PostgreSQL (storetest.PostgresDSNEnv, in a schema of this run's own,
// dropped at the end), reached through a TCP proxy that the scenarios cut and restore:
// the outage is real for the collector (connections closed and refused) while the shared
// server keeps running. Without storetest.PostgresDSNEnv they are skipped, or fail when
// CI=true (storetest.MissingPostgres).
func (h *harness) storeOutages(short bool) {
	base := os.Getenv(storetest.PostgresDSNEnv)
	if base == "" {
		how, fail := storetest.MissingPostgres()
		if fail {
			h.fail("the store-outage scenarios must run in CI: %s", how)
			return
		}
		fmt.Printf("SKIP store outage on PostgreSQL: %s\n\n", how)
		return
	}
	pg, err := newPGSchema(base)
	if err != nil {
		h.fail("store outage: %v", err)
		return
	}
	defer pg.drop()
	p, err := newProxy(pg.host)
	if err != nil {
		h.fail("store outage: proxy: %v", err)
		return
	}
	defer p.close()
	dsn := pg.via(p.ln.Addr().String())

	// The short form paces the load (about a third of the unpaced rate here): the backlog
	// the restart has to store, and so CI's time, stays small.
	up, outage, load, pace := 3*time.Second, 10*time.Second, 3*time.Second, time.Duration(0)
	if short {
		up, outage, load, pace = time.Second, 3*time.Second, time.Second, 2*time.Millisecond
	}
	for _, sc := range []struct {
		name string
		run  func(*harness)
	}{
		{"outage", func(o *harness) { o.outageAcrossSIGTERM(p, pg, up, outage) }},
		{"down-at-start", func(o *harness) { o.downAtStart(p, pg, load) }},
	} {
		o := &harness{bin: h.bin, dir: filepath.Join(h.dir, sc.name), sink: h.sink, pace: pace}
		o.loadN.Store(h.loadN.Load() + 1<<24) // distinct trace ids
		err := os.MkdirAll(o.dir, 0o700)
		if err == nil {
			err = o.writeConfig("postgres", dsn, outageRetry)
		}
		if err != nil {
			h.fail("store outage %s: %v", sc.name, err)
			continue
		}
		p.restore()
		sc.run(o)
		h.loadN.Store(o.loadN.Load())
		h.failures = append(h.failures, o.failures...)
		fmt.Println()
	}
}

// outageRow is one phase of a store-outage scenario.
type outageRow struct {
	name    string
	in, out int64
	ids     []string
	slowest time.Duration // the longest Export call the collector accepted
}

// loadFor runs the load for d, stops it and waits until the sink received every span
// accepted (or 10s).
func (h *harness) loadFor(name, prefix string, d time.Duration) outageRow {
	before := h.sink.load.Load()
	l, err := h.startLoad(prefix)
	if err != nil {
		h.fail("%s: grpc client: %v", name, err)
		return outageRow{name: name}
	}
	time.Sleep(d)
	l.stop()
	_, in, ids := l.counts()
	return outageRow{name: name, in: in, out: waitFor(&h.sink.load, before, in, 10*time.Second) - before, ids: ids, slowest: l.slowest}
}

// outageAcrossSIGTERM: the store is reachable for up under load, then cut for outage
// under load (the spans must all come out meanwhile), then the collector gets a SIGTERM
// under load with the store still cut; it restarts with the store back, and every
// analysis sent must be stored, each once.
func (h *harness) outageAcrossSIGTERM(p *proxy, pg *pgSchema, up, outage time.Duration) {
	fmt.Printf("store outage on PostgreSQL (through a proxy the run cuts; retry_on_failure %s)\n", outageRetry)
	if !h.launch("store outage: start") {
		return
	}
	rows := []outageRow{h.loadFor(fmt.Sprintf("store up, %s of load", up), "outage", up)}
	// The sessions end and are stored before the cut: the store took writes.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if kept, _, err := pg.stored(rows); err == nil && kept == len(rows[0].ids) {
			break
		}
	}

	p.cut()
	cutAt := time.Now()
	time.Sleep(200 * time.Millisecond) // a commit already on the wire lands
	storedAtCut, _, err := pg.stored(nil)
	if err != nil {
		h.fail("store outage: reading the store: %v", err)
	}
	r := h.loadFor(fmt.Sprintf("store cut, %s of load", outage), "outage", outage)
	rows = append(rows, r)
	if r.in == 0 || r.in != r.out {
		h.fail("store outage: spans in %d, out %d while the store was cut", r.in, r.out)
	}

	r, took, exitErr := h.sigtermAfter("outage", 300*time.Millisecond)
	r.name = "SIGTERM under load, store cut"
	rows = append(rows, r)
	if exitErr != nil {
		h.fail("store outage: after SIGTERM: %v", exitErr)
	}
	down := time.Since(cutAt)
	storedAtExit, _, err := pg.stored(nil)
	if err != nil {
		h.fail("store outage: reading the store: %v", err)
	}
	fmt.Printf("  store cut %.1fs (%d connections refused, %d closed); analyses stored at the cut %d, at the exit %d; exit %.2fs after SIGTERM\n",
		down.Seconds(), p.refused.Load(), p.closed.Load(), storedAtCut, storedAtExit, took.Seconds())
	if storedAtExit != storedAtCut {
		h.fail("store outage: %d analyses stored while the store was cut: the outage was not real", storedAtExit-storedAtCut)
	}

	p.restore()
	h.restartAndCount(pg, rows)
}

// downAtStart: the collector starts with the store cut and must pass spans under load;
// then the store comes back and every analysis sent must be stored, each once.
func (h *harness) downAtStart(p *proxy, pg *pgSchema, load time.Duration) {
	fmt.Println("store down at start (PostgreSQL through the cut proxy)")
	p.cut()
	t0 := time.Now()
	if !h.launch("store down at start: the collector did not start") {
		return
	}
	fmt.Printf("  listening %.2fs after the start with the store cut\n", time.Since(t0).Seconds())
	r := h.loadFor(fmt.Sprintf("store cut, %s of load", load), "downstart", load)
	if r.in == 0 || r.in != r.out {
		h.fail("store down at start: spans in %d, out %d", r.in, r.out)
	}
	if h.col.exited() {
		h.fail("store down at start: the collector exited")
		return
	}
	p.restore()
	fmt.Printf("  store restored %.1fs after the start (%d connections refused)\n", time.Since(t0).Seconds(), p.refused.Load())
	h.waitStored(pg, []outageRow{r}, time.Now())
	if err := h.stop(); err != nil {
		h.fail("store down at start: after SIGTERM: %v", err)
	}
}

// restartAndCount starts the collector again (the store reachable) and waits until the
// analyses of rows' sessions are stored.
func (h *harness) restartAndCount(pg *pgSchema, rows []outageRow) {
	t1 := time.Now()
	if !h.launch("store outage: restart") {
		return
	}
	defer func() { _ = h.stop() }()
	h.waitStored(pg, rows, t1)
}

// waitStored waits (up to 60s) until every session of rows is stored, then prints per
// row the spans in/out and the analyses sent (seen by the sink) and stored, and fails
// on a session whose analysis was not sent, not stored, or sent or stored twice.
func (h *harness) waitStored(pg *pgSchema, rows []outageRow, since time.Time) {
	want := 0
	for _, r := range rows {
		want += len(r.ids)
	}
	var stored map[string]int
	var kept int
	var err error
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if kept, stored, err = pg.stored(rows); err == nil && kept == want {
			break
		}
	}
	if err != nil {
		h.fail("reading the store: %v", err)
	}
	fmt.Printf("  all stored %.1fs after the collector came back to the store\n", time.Since(since).Seconds())
	fmt.Printf("  %-36s %9s %9s %9s %9s %9s\n", "phase", "spans in", "spans out", "analyses", "stored", "slowest")
	var in, out, sent, total int64
	for _, r := range rows {
		var a, s, twice int64
		for _, id := range r.ids {
			n := h.sink.analysesOf(id)
			a += n
			if stored[id] > 0 {
				s++
			}
			if n > 1 || stored[id] > 1 {
				twice++
			}
		}
		fmt.Printf("  %-36s %9d %9d %9d %9d %9s\n", r.name, r.in, r.out, a, s, r.slowest.Round(time.Millisecond))
		if r.in != r.out {
			h.fail("%s: spans in %d, out %d", r.name, r.in, r.out)
		}
		if a != int64(len(r.ids)) || s != a || twice > 0 {
			h.fail("%s: %d sessions accepted, analyses sent %d, stored %d, %d sent or stored twice", r.name, len(r.ids), a, s, twice)
		}
		in, out, sent, total = in+r.in, out+r.out, sent+a, total+s
	}
	fmt.Printf("  %-36s %9d %9d %9d %9d\n", "total", in, out, sent, total)
}

// pgSchema is a schema of this run's own on the PostgreSQL server of storetest.PostgresDSNEnv.
type pgSchema struct {
	admin, db *sql.DB
	name      string
	base      *url.URL // the server's DSN with search_path = name
	host      string   // the server's host:port
}

func newPGSchema(base string) (*pgSchema, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%s must be a postgres:// URL with a host:port (got %q)", storetest.PostgresDSNEnv, base)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("agenteval_fault_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	if _, err := admin.Exec("CREATE SCHEMA " + name); err != nil {
		_ = admin.Close()
		return nil, fmt.Errorf("create schema on %s: %w", u.Host, err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		_, _ = admin.Exec("DROP SCHEMA " + name + " CASCADE")
		_ = admin.Close()
		return nil, err
	}
	return &pgSchema{admin: admin, db: db, name: name, base: u, host: u.Host}, nil
}

// via returns the schema's DSN through host (the proxy).
func (pg *pgSchema) via(host string) string {
	u := *pg.base
	u.Host = host
	return u.String()
}

func (pg *pgSchema) drop() {
	_ = pg.db.Close()
	if _, err := pg.admin.Exec("DROP SCHEMA " + pg.name + " CASCADE"); err != nil {
		fmt.Println("  dropping schema", pg.name+":", err)
	}
	_ = pg.admin.Close()
}

// stored reads the stored sessions directly from the server (not through the proxy):
// kept counts rows' sessions that are stored (with rows nil: every session in the
// schema; 0 before the collector created its tables), and revisions gives per session
// id its stored analyses (session_analyses rows; more than one means stored twice).
func (pg *pgSchema) stored(rows []outageRow) (kept int, revisions map[string]int, err error) {
	var exists bool
	if err := pg.db.QueryRow("SELECT to_regclass('session_analyses') IS NOT NULL").Scan(&exists); err != nil || !exists {
		return 0, nil, err
	}
	res, err := pg.db.Query("SELECT s.session_id, (SELECT count(*) FROM session_analyses a WHERE a.session_id = s.session_id) FROM sessions s")
	if err != nil {
		return 0, nil, err
	}
	defer res.Close()
	revisions = map[string]int{}
	for res.Next() {
		var id string
		var n int
		if err := res.Scan(&id, &n); err != nil {
			return 0, nil, err
		}
		revisions[id] = n
	}
	if rows == nil {
		return len(revisions), revisions, res.Err()
	}
	for _, r := range rows {
		for _, id := range r.ids {
			if revisions[id] > 0 {
				kept++
			}
		}
	}
	return kept, revisions, res.Err()
}

// proxy forwards TCP connections to target while up; cut closes every open connection
// and refuses new ones (accepted and closed at once) until restore.
type proxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	up      bool
	conns   map[net.Conn]bool // open connections, true for the collector's side
	wg      sync.WaitGroup
	refused atomic.Int64 // connections refused while cut
	closed  atomic.Int64 // the collector's open connections closed by cut
}

func newProxy(target string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, target: target, up: true, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c, true) {
			p.refused.Add(1)
			_ = c.Close()
			continue
		}
		p.wg.Add(1)
		go p.forward(c)
	}
}

// track registers c while up; false when cut.
func (p *proxy) track(c net.Conn, client bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.up {
		return false
	}
	p.conns[c] = client
	return true
}

func (p *proxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

func (p *proxy) forward(c net.Conn) {
	defer p.wg.Done()
	defer p.untrack(c)
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(s, false) {
		_ = s.Close()
		return
	}
	defer p.untrack(s)
	defer s.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(s, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, s); done <- struct{}{} }()
	<-done
}

// cut closes every open connection and refuses new ones.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up = false
	for c, client := range p.conns {
		_ = c.Close()
		if client {
			p.closed.Add(1)
		}
	}
	clear(p.conns)
}

func (p *proxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up = true
}

func (p *proxy) close() {
	_ = p.ln.Close()
	p.cut()
	p.wg.Wait()
}
