package connections

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
)

// ejectRound is one run of NacosRuntimeConnectionEjector.doEject:
//
//   - every connection silent for KeepAlive, or whose sends have been
//     failing busy for over BusyEject, is sent a ClientDetectionRequest;
//     those that do not answer it successfully within DetectTimeout are
//     unregistered (an answer refreshes the connection);
//   - when a rebalance is pending (Rebalance), client connections above
//     its count are sent a ConnectResetRequest.
//
// The detection answers are awaited asynchronously (timers of the clock),
// so the round itself never blocks; a round that starts while the previous
// one still waits is skipped.
func (m *Manager) ejectRound() {
	m.ejectOverLimit()
	if !m.roundBusy.CompareAndSwap(false, true) {
		return
	}
	now := m.clk.Now().UnixMilli()
	keep := m.cfg.KeepAlive.Milliseconds()
	busy := m.cfg.BusyEject.Milliseconds()
	var stale []*Conn
	m.mu.RLock()
	for _, c := range m.conns {
		c.mu.Lock()
		blocked := c.lastBlock-c.firstBlock > busy
		c.mu.Unlock()
		if now-c.lastActive.Load() >= keep || blocked {
			stale = append(stale, c)
		}
	}
	m.mu.RUnlock()
	if len(stale) == 0 {
		m.roundBusy.Store(false)
		return
	}
	var (
		mu      sync.Mutex
		left    = len(stale)
		alive   = map[string]bool{}
		settled bool
	)
	finish := func() {
		var gone []string
		for _, c := range stale {
			if !alive[c.ID] {
				gone = append(gone, c.ID)
			}
		}
		for _, id := range gone {
			m.log.Info("unregistering a connection that did not answer the client detection", "connectionId", id)
			m.Unregister(id)
		}
		m.roundBusy.Store(false)
	}
	done := func(id string, ok bool) {
		mu.Lock()
		if ok {
			alive[id] = true
		}
		left--
		last := left == 0 && !settled
		if last {
			settled = true
		}
		mu.Unlock()
		if last {
			finish()
		}
	}
	for _, c := range stale {
		c := c
		err := m.RequestAsync(c.ID, &remote.ClientDetectionRequest{}, m.cfg.DetectTimeout, func(r *remote.DecodedResponse, err error) {
			ok := err == nil && r != nil && r.Success()
			if ok {
				c.lastActive.Store(m.clk.Now().UnixMilli())
			}
			done(c.ID, ok)
		})
		if err != nil {
			done(c.ID, false)
		}
	}
}

// resetTimeout is how long a ConnectResetRequest waits for its answer.
const resetTimeout = 3 * time.Second

// Rebalance asks the next ejection round to move client connections above
// loadCount to redirect ("ip:port", or "" to let each client choose):
// ServerLoaderController's reloadCount (Java's loadCount/redirectAddress).
func (m *Manager) Rebalance(loadCount int, redirect string) {
	m.rebalanceMu.Lock()
	m.loadCount, m.redirect = loadCount, redirect
	m.rebalanceMu.Unlock()
}

func (m *Manager) ejectOverLimit() {
	m.rebalanceMu.Lock()
	count, redirect := m.loadCount, m.redirect
	m.loadCount, m.redirect = -1, ""
	m.rebalanceMu.Unlock()
	if count <= 0 {
		return
	}
	excess := m.Count() - count
	if excess <= 0 {
		return
	}
	for _, c := range m.List() {
		if excess <= 0 {
			break
		}
		if c.SDK() && m.Reset(c.ID, redirect) {
			excess--
		}
	}
}

// Reset sends a client a ConnectResetRequest (ConnectionManager.loadSingle):
// with redirect "ip:port" it names the server to move to. It reports
// whether the request went out (a closed connection is unregistered and
// counts as moved). The answer is not awaited.
func (m *Manager) Reset(id, redirect string) bool {
	c := m.Get(id)
	if c == nil || !c.SDK() {
		return true
	}
	req := &remote.ConnectResetRequest{}
	if ip, port, ok := strings.Cut(redirect, ":"); ok && strings.TrimSpace(redirect) != "" {
		req.ServerIP, req.ServerPort, req.ConnectionID = ip, port, id
	}
	err := m.RequestAsync(id, req, resetTimeout, func(*remote.DecodedResponse, error) {})
	switch {
	case err == nil:
		return true
	case errors.Is(err, ErrClosed) || errors.Is(err, ErrNoConnection):
		m.Unregister(id)
		return true
	}
	m.log.Warn("connect reset failed", "connectionId", id, "err", err)
	return false
}
