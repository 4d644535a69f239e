package push

// Counters are the push service's activity since start, read by the
// metrics endpoint at scrape time.
type Counters struct {
	// Total counts distinct pushes (Java totalPush).
	Total int64
	// Failed counts pushes given up, failed to send or dropped for
	// overflow (Java failedPush, without the pending ones).
	Failed int64
	// Pending is the number of pushes waiting for their ack (Java ackMap).
	Pending int64
	// Acked counts pushes acknowledged by their client.
	Acked int64
	// Sends counts datagrams written, retransmissions included.
	Sends int64
	// Capped counts pushes not sent because their target's byte budget
	// was spent (Config.TargetBytesPerSecond; part of Failed).
	Capped int64
}

// Counters returns the counters.
func (s *Service) Counters() Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Counters{Total: s.total, Failed: s.failed, Pending: int64(len(s.pending)), Acked: s.acked, Sends: s.sends, Capped: s.capped}
}
