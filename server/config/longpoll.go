package config

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock"
)

// ListenRequest is one POST /v1/cs/configs/listener (config-v1.md §4).
// Strings must not alias request memory (the HTTP layer copies them).
type ListenRequest struct {
	Entries []compat.ListenEntry
	// IP is the client IP (X-Forwarded-For / X-Real-IP / remote address).
	IP string
	// Tag is the Vipserver-Tag header.
	Tag     string
	AppName string
	// Timeout is the Long-Pulling-Timeout value in ms.
	Timeout int64
	// NoHangup is Long-Pulling-Timeout-No-Hangup=true.
	NoHangup bool
}

// Poll is a long-poll request held until a listened config changes, its
// timer fires or the service closes. Done is closed then, and Result gives
// the answer (nil: empty 200).
type Poll struct {
	p       *pollers
	req     ListenRequest
	keys    []string // group keys, parallel to req.Entries
	done    chan struct{}
	state   atomic.Int32 // 0 waiting, 1 finished
	result  []compat.ChangedKey
	timer   clock.Timer
	timerMu sync.Mutex // guards timer, after and answered
	after   func()     // AfterDone's f
	// answered is set once result is final (after state, which only
	// reserves the right to answer).
	answered bool
}

// Done is closed when the answer is ready.
func (p *Poll) Done() <-chan struct{} { return p.done }

// Result returns the changed keys once Done is closed (nil: none).
func (p *Poll) Result() []compat.ChangedKey { return p.result }

// AfterDone arranges for f to run in a goroutine of its own once the
// answer is ready (at once when it already is), so a caller can hold a
// poll without a goroutine blocked on Done. At most one f per Poll.
func (p *Poll) AfterDone(f func()) {
	p.timerMu.Lock()
	if !p.answered {
		p.after = f
		p.timerMu.Unlock()
		return
	}
	p.timerMu.Unlock()
	go f()
}

// Cancel releases the holder (the client went away); Done closes.
func (p *Poll) Cancel() { p.p.finish(p, nil) }

// pollers indexes held long polls by group key and by client IP.
type pollers struct {
	s     *Service
	mu    sync.Mutex
	byKey map[string]map[*Poll]struct{}
	byIP  map[string]map[*Poll]struct{}
	n     int

	wakeups atomic.Int64 // holders answered because of a change (Stats)
}

func newPollers(s *Service) *pollers {
	return &pollers{s: s, byKey: map[string]map[*Poll]struct{}{}, byIP: map[string]map[*Poll]struct{}{}}
}

// MD5 returns the MD5 served to a client for a group key: the beta MD5 for a
// listed beta IP, else the tag variant's MD5 when tag names one, else the
// main MD5; "" when nothing exists (ConfigCacheService.getContentMd5).
func (s *Service) MD5(groupKey, ip, tag string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.md5Locked(groupKey, ip, tag)
}

func (s *Service) md5Locked(gk, ip, tag string) string {
	return s.md5LockedIP(s.items[gk], func() string { return ip }, tag)
}

// md5LockedIP is md5Locked on an item, with the client IP asked for only
// when the item has a beta variant.
func (s *Service) md5LockedIP(it *item, ip func() string, tag string) string {
	if it == nil {
		return ""
	}
	if it.beta != nil && containsStr(it.betaIPs, ip()) {
		return it.beta.MD5
	}
	if tag != "" && it.tags != nil {
		if t := it.tags[tag]; t != nil {
			return t.MD5
		}
	}
	if it.info == nil {
		return ""
	}
	return it.info.MD5
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Changed returns the entries whose MD5 differs from the server's, in the
// order Java lists them (MD5Util.compareMd5 over a HashMap).
func (s *Service) Changed(entries []compat.ListenEntry, ip, tag string) []compat.ChangedKey {
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.GroupKey()
	}
	return s.changedKeys(entries, keys, ip, tag)
}

func (s *Service) changedKeys(entries []compat.ListenEntry, keys []string, ip, tag string) []compat.ChangedKey {
	return s.changedKeysIP(entries, keys, func() string { return ip }, tag)
}

// changedKeysIP is changedKeys with the client IP asked for only when a
// beta variant needs it, and keys built on the stack when keys is nil.
func (s *Service) changedKeysIP(entries []compat.ListenEntry, keys []string, ip func() string, tag string) []compat.ChangedKey {
	var changed []string
	var idx map[string]int
	s.mu.RLock()
	for i, e := range entries {
		var it *item
		var kb [256]byte
		var k []byte
		if keys != nil {
			it = s.items[keys[i]]
		} else {
			k = compat.AppendGroupKey(kb[:0], e.DataID, e.Group, e.Tenant)
			it = s.items[string(k)]
		}
		if s.md5LockedIP(it, ip, tag) != e.MD5 {
			gk := ""
			if keys != nil {
				gk = keys[i]
			} else {
				gk = string(k)
			}
			if idx == nil {
				idx = map[string]int{}
			}
			changed = append(changed, gk)
			idx[gk] = i
		}
	}
	s.mu.RUnlock()
	if len(changed) == 0 {
		return nil
	}
	if len(changed) > 1 {
		changed = compat.ListenOrder(changed)
	}
	out := make([]compat.ChangedKey, len(changed))
	for i, k := range changed {
		e := entries[idx[k]]
		out[i] = compat.ChangedKey{DataID: e.DataID, Group: e.Group, Tenant: e.Tenant}
	}
	return out
}

// CheckListen is the first look of a long poll: when it can be answered
// at once — a listened config changed, Long-Pulling-Timeout-No-Hangup, or
// the service is closing — it returns the answer (nil: none changed) and
// true, holding nothing; otherwise the caller holds it with Listen (which
// registers the holder, then looks again). Nothing of its arguments is
// kept, so they may alias request memory; ip is asked for only when a
// beta variant needs it.
func (s *Service) CheckListen(entries []compat.ListenEntry, ip func() string, tag string, noHangup bool) ([]compat.ChangedKey, bool) {
	if s.currentSwitches().fixedPolling {
		return nil, false
	}
	if changed := s.changedKeysIP(entries, nil, ip, tag); len(changed) > 0 {
		return changed, true
	}
	return nil, noHangup || s.shut.Load()
}

// HoldTimeout is how long a long poll with client timeout ms is held:
// max(10 s, timeout - LongPollDelay) (10 s is Config.MinLongPollHold).
func (s *Service) HoldTimeout(timeoutMs int64) time.Duration {
	delay := s.cfg.LongPollDelay
	if sw := s.currentSwitches(); sw.delay >= 0 {
		delay = sw.delay
	}
	d := time.Duration(timeoutMs)*time.Millisecond - delay
	if timeoutMs > int64(time.Duration(1<<62)/time.Millisecond) {
		d = 1 << 62
	}
	return max(s.cfg.MinLongPollHold, d)
}

// Listen starts a long poll. The holder is registered before the MD5s are
// compared, so a change committed meanwhile is never missed. When something
// already differs, or NoHangup is set, the returned Poll is already done.
func (s *Service) Listen(req ListenRequest) *Poll {
	p := &Poll{p: s.polls, req: req, done: make(chan struct{}), keys: make([]string, len(req.Entries))}
	for i, e := range req.Entries {
		p.keys[i] = e.GroupKey()
	}
	s.polls.add(p)
	if sw := s.currentSwitches(); sw.fixedPolling {
		// Fixed polling: no immediate check; answer with the changes at
		// max(10 s, fixedPollingInertval).
		t := s.clk.AfterFunc(max(s.cfg.MinLongPollHold, sw.interval), func() {
			s.polls.finish(p, s.changedKeys(req.Entries, p.keys, req.IP, req.Tag))
		})
		p.setTimer(t)
		return p
	}
	if changed := s.changedKeys(req.Entries, p.keys, req.IP, req.Tag); len(changed) > 0 {
		s.polls.finish(p, changed)
		return p
	}
	if req.NoHangup || s.shut.Load() {
		s.polls.finish(p, nil)
		return p
	}
	p.setTimer(s.clk.AfterFunc(s.HoldTimeout(req.Timeout), func() { s.polls.finish(p, nil) }))
	return p
}

func (p *Poll) setTimer(t clock.Timer) {
	p.timerMu.Lock()
	p.timer = t
	p.timerMu.Unlock()
	if p.state.Load() != 0 { // finished before the timer was stored
		t.Stop()
	}
}

// Holders returns the number of held long polls.
func (s *Service) Holders() int {
	s.polls.mu.Lock()
	defer s.polls.mu.Unlock()
	return s.polls.n
}

func (ps *pollers) add(p *Poll) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, k := range p.keys {
		m := ps.byKey[k]
		if m == nil {
			m = map[*Poll]struct{}{}
			ps.byKey[k] = m
		}
		m[p] = struct{}{}
	}
	m := ps.byIP[p.req.IP]
	if m == nil {
		m = map[*Poll]struct{}{}
		ps.byIP[p.req.IP] = m
	}
	m[p] = struct{}{}
	ps.n++
}

func (ps *pollers) removeLocked(p *Poll) {
	for _, k := range p.keys {
		if m := ps.byKey[k]; m != nil {
			delete(m, p)
			if len(m) == 0 {
				delete(ps.byKey, k)
			}
		}
	}
	if m := ps.byIP[p.req.IP]; m != nil {
		delete(m, p)
		if len(m) == 0 {
			delete(ps.byIP, p.req.IP)
		}
	}
	ps.n--
}

// finish answers p once; later calls do nothing.
func (ps *pollers) finish(p *Poll, result []compat.ChangedKey) {
	if !p.state.CompareAndSwap(0, 1) {
		return
	}
	ps.mu.Lock()
	ps.removeLocked(p)
	ps.mu.Unlock()
	p.finishDetached(result)
}

func (p *Poll) finishDetached(result []compat.ChangedKey) {
	p.result = result
	p.timerMu.Lock()
	if p.timer != nil {
		p.timer.Stop()
	}
	p.answered = true
	f := p.after
	p.after = nil
	p.timerMu.Unlock()
	close(p.done)
	if f != nil {
		go f()
	}
}

// changed wakes every holder of gk with exactly that key (no MD5 re-check,
// as Java). betaIPs non-nil restricts the wake-up to those client IPs.
func (ps *pollers) changed(gk string, betaIPs []string) {
	ps.mu.Lock()
	m := ps.byKey[gk]
	if len(m) == 0 {
		ps.mu.Unlock()
		return
	}
	woken := make([]*Poll, 0, len(m))
	for p := range m {
		if betaIPs != nil && !containsStr(betaIPs, p.req.IP) {
			continue
		}
		if !p.state.CompareAndSwap(0, 1) {
			continue
		}
		ps.removeLocked(p)
		woken = append(woken, p)
	}
	ps.mu.Unlock()
	ps.wakeups.Add(int64(len(woken)))
	for _, p := range woken {
		for i, k := range p.keys {
			if k == gk {
				e := p.req.Entries[i]
				p.finishDetached([]compat.ChangedKey{{DataID: e.DataID, Group: e.Group, Tenant: e.Tenant}})
				break
			}
		}
	}
}

// recheckAll compares every holder's MD5s again (after a snapshot restore
// replaced the whole state) and answers those with changes.
func (ps *pollers) recheckAll() {
	ps.mu.Lock()
	all := make([]*Poll, 0, ps.n)
	for _, m := range ps.byIP {
		for p := range m {
			all = append(all, p)
		}
	}
	ps.mu.Unlock()
	for _, p := range all {
		if changed := ps.s.changedKeys(p.req.Entries, p.keys, p.req.IP, p.req.Tag); len(changed) > 0 {
			ps.finish(p, changed)
		}
	}
}

// closeAll answers every holder with an empty result.
func (ps *pollers) closeAll() {
	ps.mu.Lock()
	all := make([]*Poll, 0, ps.n)
	for _, m := range ps.byIP {
		for p := range m {
			all = append(all, p)
		}
	}
	ps.mu.Unlock()
	for _, p := range all {
		ps.finish(p, nil)
	}
}

// Watchers lists the held polls listening to groupKey: client IP → the MD5
// the client reported (CommunicationController.getSubClientConfig).
func (s *Service) Watchers(groupKey string) map[string]string {
	ps := s.polls
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := map[string]string{}
	for p := range ps.byKey[groupKey] {
		for i, k := range p.keys {
			if k == groupKey {
				out[p.req.IP] = p.req.Entries[i].MD5
			}
		}
	}
	return out
}

// WatchedBy lists what the held polls of one client IP listen to:
// groupKey → reported MD5 (getSubClientConfigByIp).
func (s *Service) WatchedBy(ip string) map[string]string {
	ps := s.polls
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := map[string]string{}
	for p := range ps.byIP[ip] {
		for i, k := range p.keys {
			out[k] = p.req.Entries[i].MD5
		}
	}
	return out
}
