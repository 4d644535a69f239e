package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nacosd/nacosd/compat"
)

// announce reports self to every other member at once when the node
// starts. Java's first report goes to one member 5 s after the start, the
// next 2 s later to the next: for seconds after a restart the members
// disagreed on whether the node was UP, hence on Distro's owner of its
// services. A restarted owner expired an instance that a member still
// counting it DOWN refused to drop (its sync answered 409 "not the
// owner") until that member's own report reached it 2 s later (jepsen
// seed 1201: listed 31.9 s after its last beat).
func (m *Manager) announce() { m.reportAll(m.ctx, m.Others()) }

// reportAll reports to every target at once and returns those that did not
// answer.
func (m *Manager) reportAll(ctx context.Context, targets []string) []string {
	var mu sync.Mutex
	var unanswered []string
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Go(func() {
			if !m.reportTo(ctx, t) {
				mu.Lock()
				unanswered = append(unanswered, t)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return unanswered
}

// reportOnce is MemberInfoReportTask: send self to the next other member
// (round robin over the sorted list) and mark it by the result.
func (m *Manager) reportOnce() {
	others := m.Others()
	if len(others) == 0 {
		return
	}
	m.mu.Lock()
	m.cursor = (m.cursor + 1) % len(others)
	target := others[m.cursor]
	m.mu.Unlock()
	m.reportTo(m.ctx, target)
}

// reportTo sends one report and applies its outcome; it reports whether
// the target answered at all.
func (m *Manager) reportTo(ctx context.Context, target string) bool {
	m.mu.RLock()
	body := m.selfLocked().JSON()
	m.mu.RUnlock()
	h := http.Header{"Content-Type": {"application/json;charset=UTF-8"}, "Nacos-Server": {m.cfg.Version}}
	if m.cfg.RaftAddr != "" {
		h.Set(HeaderRaft, m.cfg.RaftAddr)
	}
	resp, err := m.cfg.Peers.Do(ctx, Request{Method: http.MethodPost, Addr: target, Path: "/v1/core/cluster/report", Header: h, Body: body})
	if ctx.Err() != nil {
		return false
	}
	switch {
	case err != nil:
		m.log.Debug("cluster: report failed", "target", target, "err", err)
		m.onFail(target, refused(err))
		return false
	case resp.Status == http.StatusNotFound || resp.Status == http.StatusNotImplemented:
		m.log.Warn("cluster: member version is too low; it is recommended to upgrade it", "target", target, "version", m.cfg.Version)
	case resp.Status == http.StatusOK && restResultOK(resp.Body):
		if raft := resp.Header.Get(HeaderRaft); raft != "" {
			m.SetKind(target, KindNacosd, raft)
			if l := resp.Header.Get(HeaderRaftLeader); l != "" {
				m.mu.Lock()
				m.leader = l
				m.mu.Unlock()
			}
		} else {
			m.SetKind(target, KindJava, "")
		}
		m.onSuccess(target)
	default:
		m.log.Warn("cluster: report rejected", "target", target, "status", resp.Status, "body", truncate(resp.Body, 200))
		m.onFail(target, false)
	}
	return true
}

// Probe reports to every other member at once, again every interval to
// those that have not answered, until all answered or ctx ends. A node
// that bootstraps raft for the first time calls it to learn which members
// are Java nodes (their JRaft cannot vote in nacosd's raft group).
func (m *Manager) Probe(ctx context.Context, interval time.Duration) {
	pending := m.Others()
	for len(pending) > 0 {
		pending = m.reportAll(ctx, pending)
		if len(pending) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			m.log.Info("cluster: members not heard from before raft bootstrap; counted as nacosd voters", "members", strings.Join(pending, ","))
			return
		case <-time.After(interval):
		}
	}
}

// refused reports whether err is a refused connection (Java: the message
// contains "Connection refused"), which makes the member DOWN at once.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(strings.ToLower(err.Error()), "connection refused")
}

func restResultOK(body []byte) bool {
	var r struct {
		Code int `json:"code"`
	}
	return json.Unmarshal(body, &r) == nil && (r.Code == 200 || r.Code == 0)
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// onSuccess is MemberUtil.onSuccess.
func (m *Manager) onSuccess(addr string) {
	m.mu.Lock()
	mem, ok := m.members[addr]
	if !ok || mem == m.self {
		m.mu.Unlock()
		return
	}
	old, heard := mem.state, mem.heard
	m.upSet[addr] = true
	mem.state, mem.failCnt, mem.heard = compat.MemberUp, 0, true
	m.mu.Unlock()
	if old != compat.MemberUp || !heard {
		m.log.Info("cluster: member state", "member", addr, "state", compat.MemberUp, "was", old)
		m.notify()
	}
}

// onFail is MemberUtil.onFail: SUSPICIOUS, then DOWN past the failure
// limit or at once when the connection was refused.
func (m *Manager) onFail(addr string, connRefused bool) {
	m.mu.Lock()
	mem, ok := m.members[addr]
	if !ok || mem == m.self {
		m.mu.Unlock()
		return
	}
	old, heard := mem.state, mem.heard
	delete(m.upSet, addr)
	mem.state = compat.MemberSuspicious
	mem.failCnt++
	mem.heard = true
	if mem.failCnt > m.cfg.MaxFailAccess || connRefused {
		mem.state = compat.MemberDown
	}
	state := mem.state
	m.mu.Unlock()
	if old != state || !heard {
		m.log.Info("cluster: member state", "member", addr, "state", state, "was", old)
		m.notify()
	}
}

// Update is ServerMemberManager.update for a report received from a
// member (the handler has forced its state UP): the stored member takes
// the reported ip, port, state and extendInfo, plus lastRefreshTime. It
// reports whether the address is a member.
func (m *Manager) Update(r compat.ReportedMember) bool {
	addr := r.EffectiveAddress()
	m.mu.Lock()
	mem, ok := m.members[addr]
	if !ok || mem == m.self {
		m.mu.Unlock()
		return ok
	}
	if r.State == compat.MemberDown {
		delete(m.upSet, addr)
	}
	ext := make(map[string]any, len(r.ExtendInfo)+1)
	for k, v := range r.ExtendInfo {
		ext[k] = v
	}
	changed := basicInfoChanged(mem, r, ext) || !mem.heard
	mem.heard = true
	ext["lastRefreshTime"] = m.cfg.Clock.Now().UnixMilli()
	mem.ip, mem.port, mem.ext = r.IP, r.Port, ext
	if r.State != "" {
		mem.state = r.State
	}
	m.mu.Unlock()
	if changed {
		m.notify()
	}
	return true
}

// basicMetaKeys are MemberMetaDataConstants.BASIC_META_KEYS.
var basicMetaKeys = []string{"site", "adWeight", "raftPort", "weight", "version"}

// basicInfoChanged is MemberUtil.isBasicInfoChanged(new, old).
func basicInfoChanged(old *member, r compat.ReportedMember, ext map[string]any) bool {
	if old.ip != r.IP || old.port != r.Port || old.address() != r.EffectiveAddress() || (r.State != "" && old.state != r.State) {
		return true
	}
	for _, k := range basicMetaKeys {
		a, aok := old.ext[k]
		b, bok := ext[k]
		if aok != bok || stringOf(a) != stringOf(b) {
			return true
		}
	}
	return false
}

func stringOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "<nil>"
	case string:
		return x
	case json.Number:
		return x.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Leave removes members (POST /v1/core/cluster/server/leave): the list
// changes at once; a cluster.conf given by file is rewritten as Java does
// (a comment with the time, then every remaining member).
func (m *Manager) Leave(addrs []string) error {
	gone := map[string]bool{}
	for _, a := range addrs {
		if p, err := compat.ParseMemberAddress(a); err == nil {
			gone[p] = true
		}
	}
	var keep []string
	for _, a := range m.Addresses() {
		if !gone[a] {
			keep = append(keep, a)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	m.mu.RLock()
	sig := m.confSig
	m.mu.RUnlock()
	if len(m.cfg.Fixed) == 0 && m.cfg.ConfPath != "" {
		if _, err := os.Stat(m.cfg.ConfPath); err == nil {
			text := "#" + m.cfg.Clock.Now().Format("2006-01-02T15:04:05.000") + "\n" + strings.Join(keep, "\n") + "\n"
			if err := writeFileAtomic(m.cfg.ConfPath, []byte(text)); err != nil {
				return err
			}
			sig = text
		}
	}
	m.apply(keep, sig)
	return nil
}

// writeFileAtomic writes a file through a temporary file and a rename.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	f, err := os.Open(tmp)
	if err == nil {
		_ = f.Sync()
		f.Close()
	}
	return os.Rename(tmp, path)
}
