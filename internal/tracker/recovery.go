// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker // import "github.com/agenteval/agenteval-collector/internal/tracker"

import "time"

// MinRecoveryLease is the shortest lease a collector instance holds on its open sessions
// (Recovery): a pause of the process (GC, a loaded machine, a slow store) shorter than it
// never lets another instance take them.
const MinRecoveryLease = 10 * time.Second

// Recovery is when a collector renews its lease on the sessions it holds open and when it
// sweeps for sessions cut by a crash (docs/decisions/result-durability.md). Sessions whose
// turn records were stored by a collector instance that died (kill -9) before analysing
// them are ended with EndReasonRestart, partial, once
//   - the dead instance's lease ended (it is renewed every Lease/4 while the instance runs,
//     Lease = max(session_timeout, MinRecoveryLease)), and
//   - session_timeout passed since this instance started with no span of the session
//     (one that arrives continues the session as usual: the sweep skips sessions open in
//     the Tracker).
//
// The sweep runs first session_timeout after the start, then every
// min(session_timeout, Lease/4) (at least a second apart), so that a dead instance's
// sessions are taken soon after its lease ended. Time is passed in; Recovery is not safe
// for concurrent use.
type Recovery struct {
	// Lease is how long a renewal keeps this instance's sessions from other instances.
	Lease time.Duration
	// Every is the interval between sweeps.
	Every time.Duration

	nextBeat, nextSweep time.Time
}

// NewRecovery returns the schedule of an instance started at started with the given
// session_timeout (0: DefaultSessionTimeout). Its first heartbeat is due at once.
func NewRecovery(sessionTimeout time.Duration, started time.Time) *Recovery {
	if sessionTimeout <= 0 {
		sessionTimeout = DefaultSessionTimeout
	}
	lease := max(sessionTimeout, MinRecoveryLease)
	return &Recovery{
		Lease:     lease,
		Every:     max(min(sessionTimeout, lease/4), time.Second),
		nextBeat:  started,
		nextSweep: started.Add(sessionTimeout),
	}
}

// Heartbeat reports whether the lease is due for renewal at now and, if so, the time the
// renewed lease lasts until; it schedules the next renewal.
func (r *Recovery) Heartbeat(now time.Time) (until time.Time, due bool) {
	if now.Before(r.nextBeat) {
		return time.Time{}, false
	}
	r.nextBeat = now.Add(r.Lease / 4)
	return now.Add(r.Lease), true
}

// SweepDue reports whether a sweep is due at now and, if so, schedules the next one.
func (r *Recovery) SweepDue(now time.Time) bool {
	if now.Before(r.nextSweep) {
		return false
	}
	r.nextSweep = now.Add(r.Every)
	return true
}
