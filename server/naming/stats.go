package naming

import "sync/atomic"

// Stats are the registry's activity counters since start, read by the
// metrics endpoint at scrape time.
type Stats struct {
	// Beats counts PUT /instance/beat calls that reached the registry.
	Beats int64
	// BeatsUnknown counts beats answered 20404 (instance not found, no beat
	// body to re-register from).
	BeatsUnknown int64
	// TCPProbes and HTTPProbes count health probes started (Java's
	// tcpHealthCheck and httpHealthCheck monitors).
	TCPProbes, HTTPProbes int64
}

type stats struct {
	beats, beatsUnknown, tcpProbes, httpProbes atomic.Int64
}

// Stats returns the counters.
func (r *Registry) Stats() Stats {
	return Stats{Beats: r.stats.beats.Load(), BeatsUnknown: r.stats.beatsUnknown.Load(),
		TCPProbes: r.stats.tcpProbes.Load(), HTTPProbes: r.stats.httpProbes.Load()}
}
