package push

import (
	"net"
	"net/netip"
	"time"
)

// budget is the token bucket of push bytes of one target address.
type budget struct {
	tokens float64
	last   time.Time
}

// spendLocked takes n bytes from the budget of target, refilled at
// TargetBytesPerSecond up to TargetBurst since its last use, and reports
// whether it had them. A datagram larger than the whole burst is never sent.
func (s *Service) spendLocked(target string, n int, now time.Time) bool {
	b := s.budgets[target]
	if b == nil {
		b = &budget{tokens: float64(s.cfg.TargetBurst), last: now}
		s.budgets[target] = b
	}
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(float64(s.cfg.TargetBurst), b.tokens+d.Seconds()*float64(s.cfg.TargetBytesPerSecond))
		b.last = now
	}
	if float64(n) > b.tokens {
		return false
	}
	b.tokens -= float64(n)
	return true
}

// sweepBudgetsLocked forgets the budgets that refilled completely: a new one
// starts full, so nothing changes but the memory.
func (s *Service) sweepBudgetsLocked(now time.Time) {
	full := time.Duration(float64(time.Second) * float64(s.cfg.TargetBurst) / float64(s.cfg.TargetBytesPerSecond))
	for k, b := range s.budgets {
		if now.Sub(b.last) >= full {
			delete(s.budgets, k)
		}
	}
}

// trustedSource reports whether a subscription from source may name the
// address it is pushed to (Config.TrustedSources).
func (s *Service) trustedSource(source string) bool {
	a, err := netip.ParseAddr(source)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range s.cfg.TrustedSources {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// targetHost is where sub's pushes go: its clientIP when it subscribed from
// a trusted source (or the source is unknown), else its source address.
func (s *Service) targetHost(sub Subscriber) string {
	if sub.Source == "" || s.trustedSource(sub.Source) {
		return sub.IP
	}
	if ip := net.ParseIP(sub.Source); ip != nil {
		return javaHostAddress(ip, "")
	}
	return sub.Source
}
