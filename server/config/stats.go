package config

// Stats are the config service's state and activity, read by the metrics
// endpoint at scrape time.
type Stats struct {
	// Items is the number of cached group keys (Java configCount: cache
	// items, beta- or tag-only ones included).
	Items int
	// Holders is the number of held long polls (Java longPolling).
	Holders int
	// Wakeups counts held long polls answered early because a config they
	// listen to changed.
	Wakeups int64
}

// Stats returns the current figures.
func (s *Service) Stats() Stats {
	s.mu.RLock()
	items := len(s.items)
	s.mu.RUnlock()
	return Stats{Items: items, Holders: s.Holders(), Wakeups: s.polls.wakeups.Load()}
}
