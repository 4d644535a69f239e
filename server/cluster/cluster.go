// Package cluster keeps a node's view of its cluster as Java Nacos 1.4.8's
// ServerMemberManager does (console-auth-core-v1.md §4): the member list
// from cluster.conf (re-read when it changes), NACOS_SERVERS or
// nacos.member.list; each member's state (UP, SUSPICIOUS, DOWN) from the
// round-robin /v1/core/cluster/report calls every node makes; and the
// subscribers (Distro's owner mapping, the raft voter set) told of every
// change. Standalone mode is a cluster of self only, with no reports.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock"
)

// Config configures a Manager. Zero durations mean Java's defaults.
type Config struct {
	// Self is this node's member address, ip:port (the advertised IP and the
	// HTTP port).
	Self string
	// Version is written into self's extendInfo (1.4.8).
	Version string
	// RaftAddr is this node's raft address (ip:port), announced to peers in
	// the HeaderRaft header of reports and report answers so that nacosd
	// members find each other's raft transport, and tell Java members
	// (whose JRaft is not hashicorp/raft) apart.
	RaftAddr string
	// Standalone makes the cluster self only: no lookup, no reports.
	Standalone bool
	// Fixed is a member list that is not re-read (the nacos/nacos-server
	// image's NACOS_SERVERS, which its entrypoint writes over cluster.conf).
	// When empty, ConfPath is read if it exists, else MemberList.
	Fixed []string
	// ConfPath is <nacos.home>/conf/cluster.conf; it is watched for changes.
	ConfPath string
	// MemberList is nacos.member.list, used when ConfPath does not exist.
	MemberList []string

	// ReportDelay is the delay of the first report after Start (5 s);
	// ReportInterval the delay between reports (2 s); WatchInterval how
	// often cluster.conf is checked for changes (1 s).
	ReportDelay, ReportInterval, WatchInterval time.Duration
	// MaxFailAccess is nacos.core.member.fail-access-cnt (3): a member
	// whose reports failed more often in a row is DOWN.
	MaxFailAccess int
	// Peers sends the reports; required unless Standalone.
	Peers *Peers

	Clock  clock.Clock
	Logger *slog.Logger
}

// Manager is the member list and states. Safe for concurrent use.
type Manager struct {
	cfg Config
	log *slog.Logger

	mu       sync.RWMutex
	self     *member
	members  map[string]*member // by address, self included
	upSet    map[string]bool    // memberAddressInfos: reachable members
	inIPList bool
	healthy  []string // Distro's healthy list (UP and SUSPICIOUS, sorted)
	selfExt  map[string]any
	confSig  string // cluster.conf contents last applied
	cursor   int
	leader   string // a raft leader a nacosd member named in a report answer
	subs     map[int]func()
	nextSub  int

	tasks *clock.Schedules
	ctx   context.Context
	stop  context.CancelFunc
}

type member struct {
	ip      string
	port    int
	state   string
	failCnt int
	ext     map[string]any
	kind    Kind   // what the member is, once it reported or answered a report
	raft    string // its raft address, for nacosd members
	heard   bool   // a report to or from it has had an outcome
}

// Kind is what a member runs.
type Kind int

// Member kinds.
const (
	KindUnknown Kind = iota // not heard from yet
	KindNacosd              // a nacosd node (announced its raft address)
	KindJava                // a Java Nacos node (reported without one)
)

// Headers of cluster reports between nacosd nodes. Java nodes neither send
// nor answer them.
const (
	// HeaderRaft carries a nacosd node's raft address on reports and their
	// answers.
	HeaderRaft = "X-Nacosd-Raft"
	// HeaderRaftLeader, on an answer, is the raft leader the answering node
	// knows: a node starting with an empty data directory then joins that
	// raft group instead of bootstrapping one.
	HeaderRaftLeader = "X-Nacosd-Raft-Leader"
)

func (m *member) address() string { return compat.JoinMemberAddress(m.ip, m.port) }

func (m *member) public() compat.Member {
	ext := make(map[string]any, len(m.ext))
	for k, v := range m.ext {
		ext[k] = v
	}
	return compat.Member{IP: m.ip, Port: m.port, State: m.state, ExtendInfo: ext, FailAccessCnt: m.failCnt}
}

// ErrNoMembers means cluster mode found no member source.
var ErrNoMembers = errors.New("cluster: no members: write conf/cluster.conf under the Nacos home, or set NACOS_SERVERS or nacos.member.list")

// New reads the member list (an unreadable or invalid list is an error
// here, unlike later re-reads, which keep the current list as Java does).
func New(cfg Config) (*Manager, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ReportDelay == 0 {
		cfg.ReportDelay = 5 * time.Second
	}
	if cfg.ReportInterval == 0 {
		cfg.ReportInterval = 2 * time.Second
	}
	if cfg.WatchInterval == 0 {
		cfg.WatchInterval = time.Second
	}
	if cfg.MaxFailAccess == 0 {
		cfg.MaxFailAccess = 3
	}
	host, port, err := compat.SplitMemberAddress(cfg.Self)
	if err != nil {
		return nil, fmt.Errorf("cluster: self address %q: %w", cfg.Self, err)
	}
	if !cfg.Standalone && cfg.Peers == nil {
		return nil, errors.New("cluster: Config.Peers is required in cluster mode")
	}
	m := &Manager{cfg: cfg, log: cfg.Logger, members: map[string]*member{}, upSet: map[string]bool{}, inIPList: true,
		subs: map[int]func(){}, tasks: clock.NewSchedules(cfg.Clock)}
	// Java 1.4.8's settled self member: raftPort (MemberUtil.singleParse),
	// version (ServerMemberManager.init) and lastRefreshTime, set by the
	// update of self a few seconds after start (seen on the reference).
	m.self = parsedMember(host, port)
	m.self.state = compat.MemberUp
	m.self.ext["version"] = cfg.Version
	m.self.ext["lastRefreshTime"] = cfg.Clock.Now().UnixMilli()
	m.members[m.self.address()] = m.self
	m.upSet[m.self.address()] = true
	m.ctx, m.stop = context.WithCancel(context.Background())
	if cfg.Standalone {
		m.healthy = []string{m.self.address()}
		return m, nil
	}
	addrs, sig, err := m.lookup()
	if err != nil {
		return nil, err
	}
	m.apply(addrs, sig)
	m.healthy = m.addressesLocked() // DistroMapper.init: every member, until the first change
	return m, nil
}

// parsedMember is MemberUtil.singleParse: extendInfo holds the raft port.
func parsedMember(ip string, port int) *member {
	return &member{ip: ip, port: port, state: compat.MemberDown,
		ext: map[string]any{"raftPort": strconv.Itoa(compat.RaftPort(port))}}
}

// lookup reads the current member list and a signature of its source.
func (m *Manager) lookup() ([]string, string, error) {
	if len(m.cfg.Fixed) > 0 {
		addrs, err := compat.ParseMemberList(m.cfg.Fixed)
		if err != nil {
			return nil, "", fmt.Errorf("cluster: NACOS_SERVERS: %w", err)
		}
		return addrs, "fixed", nil
	}
	if m.cfg.ConfPath != "" {
		b, err := os.ReadFile(m.cfg.ConfPath)
		switch {
		case err == nil:
			addrs, err := compat.ParseClusterConf(string(b))
			if err != nil {
				return nil, "", fmt.Errorf("cluster: %s: %w", m.cfg.ConfPath, err)
			}
			return addrs, string(b), nil
		case !errors.Is(err, os.ErrNotExist):
			return nil, "", fmt.Errorf("cluster: read %s: %w", m.cfg.ConfPath, err)
		}
	}
	if len(m.cfg.MemberList) > 0 {
		addrs, err := compat.ParseMemberList(m.cfg.MemberList)
		if err != nil {
			return nil, "", fmt.Errorf("cluster: nacos.member.list: %w", err)
		}
		return addrs, "list", nil
	}
	return nil, "", ErrNoMembers
}

// apply is ServerMemberManager.memberChange: new members start DOWN,
// known ones keep their state, self is added when missing (and then the
// node is not "in the IP list"). It reports whether anything changed.
func (m *Manager) apply(addrs []string, sig string) bool {
	m.mu.Lock()
	m.confSig = sig
	self := m.self.address()
	m.inIPList = slices.Contains(addrs, self)
	if !m.inIPList {
		addrs = append(addrs, self)
		m.log.Warn("cluster: self is not in the member list; added", "self", self, "members", strings.Join(addrs, ","))
	}
	changed := len(addrs) != len(m.members)
	next := make(map[string]*member, len(addrs))
	up := map[string]bool{}
	for _, a := range addrs {
		old, ok := m.members[a]
		switch {
		case a == self:
			next[a] = m.self
		case ok:
			next[a] = old
		default:
			changed = true
			host, port, _ := compat.SplitMemberAddress(a)
			next[a] = parsedMember(host, port)
		}
		if next[a].state == compat.MemberUp {
			up[a] = true
		}
	}
	m.members, m.upSet = next, up
	m.mu.Unlock()
	if changed {
		m.log.Info("cluster: members", "members", strings.Join(m.Addresses(), ","))
		m.notify()
	}
	return changed
}

// Start begins the report loop and the cluster.conf watch; ctx ends them
// (as does Close).
func (m *Manager) Start(ctx context.Context) {
	if m.cfg.Standalone {
		return
	}
	go func() {
		select {
		case <-ctx.Done():
			m.stop()
		case <-m.ctx.Done():
		}
	}()
	go m.announce()
	m.tasks.Every(m.cfg.ReportDelay, m.cfg.ReportInterval, m.reportOnce)
	if len(m.cfg.Fixed) == 0 && m.cfg.ConfPath != "" {
		m.tasks.Every(m.cfg.WatchInterval, m.cfg.WatchInterval, m.reread)
	}
}

// Close stops the loops and waits for a running one.
func (m *Manager) Close() {
	m.stop()
	m.tasks.Close()
}

// reread applies cluster.conf when its contents changed; an invalid file
// is logged and the current list kept (FileConfigMemberLookup).
func (m *Manager) reread() {
	m.mu.RLock()
	sig := m.confSig
	m.mu.RUnlock()
	b, err := os.ReadFile(m.cfg.ConfPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		m.log.Error("cluster: read cluster.conf", "path", m.cfg.ConfPath, "err", err)
		return
	}
	if string(b) == sig {
		return
	}
	addrs, _, err := m.lookup()
	if err != nil {
		m.log.Error("cluster: member list not changed", "err", err)
		m.mu.Lock()
		m.confSig = string(b) // do not log it again until it changes
		m.mu.Unlock()
		return
	}
	m.apply(addrs, string(b))
}

// Subscribe calls fn after every change of the member list or of a
// member's state or basic information (MembersChangeEvent). fn runs
// synchronously on the goroutine that made the change and must not block.
func (m *Manager) Subscribe(fn func()) (cancel func()) {
	m.mu.Lock()
	id := m.nextSub
	m.nextSub++
	m.subs[id] = fn
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		delete(m.subs, id)
		m.mu.Unlock()
	}
}

// notify recomputes the healthy list and calls the subscribers.
func (m *Manager) notify() {
	m.mu.Lock()
	m.healthy = m.healthy[:0:0]
	for a, mem := range m.members {
		// a member not heard from yet stays in the list, as every member is
		// in DistroMapper's first list: otherwise the first reports that
		// arrive would give the members different lists, and different
		// owners, until every pair has talked
		if mem.state == compat.MemberUp || mem.state == compat.MemberSuspicious || !mem.heard {
			m.healthy = append(m.healthy, a)
		}
	}
	slices.Sort(m.healthy)
	subs := make([]func(), 0, len(m.subs))
	for _, id := range slices.Sorted(mapsKeys(m.subs)) {
		subs = append(subs, m.subs[id])
	}
	m.mu.Unlock()
	for _, fn := range subs {
		fn()
	}
}

func mapsKeys(m map[int]func()) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// SelfAddress is this node's member address.
func (m *Manager) SelfAddress() string { return m.self.address() }

// Standalone reports standalone mode.
func (m *Manager) Standalone() bool { return m.cfg.Standalone }

// Self is this node's member, with the extra extendInfo set by SetSelfInfo.
func (m *Manager) Self() compat.Member {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.selfLocked()
}

func (m *Manager) selfLocked() compat.Member {
	p := m.self.public()
	for k, v := range m.selfExt {
		p.ExtendInfo[k] = v
	}
	return p
}

// SetSelfInfo sets (v != nil) or removes an extendInfo entry of self, such
// as raftMetaData. A change refreshes self's lastRefreshTime, as Java's
// JRaftProtocol.injectProtocolMetaData does through memberManager.update.
func (m *Manager) SetSelfInfo(key string, v any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.selfExt == nil {
		m.selfExt = map[string]any{}
	}
	old, had := m.selfExt[key]
	if v == nil {
		delete(m.selfExt, key)
	} else {
		m.selfExt[key] = v
	}
	if had != (v != nil) || stringOf(old) != stringOf(v) {
		m.self.ext["lastRefreshTime"] = m.cfg.Clock.Now().UnixMilli()
	}
}

// Members lists every member, self included, sorted by address.
func (m *Manager) Members() []compat.Member {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]compat.Member, 0, len(m.members))
	for _, a := range m.addressesLocked() {
		if mem := m.members[a]; mem == m.self {
			out = append(out, m.selfLocked())
		} else {
			out = append(out, mem.public())
		}
	}
	return out
}

// Addresses lists every member address, self included, sorted.
func (m *Manager) Addresses() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.addressesLocked()
}

func (m *Manager) addressesLocked() []string {
	out := make([]string, 0, len(m.members))
	for a := range m.members {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// Others lists every member address but self, sorted.
func (m *Manager) Others() []string {
	all := m.Addresses()
	return slices.DeleteFunc(all, func(a string) bool { return a == m.self.address() })
}

// Healthy is DistroMapper's healthy list: the UP and SUSPICIOUS members,
// sorted (every member until the first change).
func (m *Manager) Healthy() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Clone(m.healthy)
}

// UpAddresses is memberAddressInfos: self and the members whose last report
// succeeded, sorted.
func (m *Manager) UpAddresses() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]string, 0, len(m.upSet))
	for a := range m.upSet {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// IsMember reports whether addr is a member address.
func (m *Manager) IsMember(addr string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, ok := m.members[addr]
	return ok
}

// HasMember is ServerMemberManager.hasMember: an exact address, or any
// member address containing addr (an IP alone matches).
func (m *Manager) HasMember(addr string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if _, ok := m.members[addr]; ok {
		return true
	}
	for a := range m.members {
		if strings.Contains(a, addr) {
			return true
		}
	}
	return false
}

// State returns a member's state ("" for a non-member).
func (m *Manager) State(addr string) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if mem, ok := m.members[addr]; ok {
		return mem.state
	}
	return ""
}

// SetKind records what a member runs (from a report it sent or answered).
func (m *Manager) SetKind(addr string, k Kind, raftAddr string) {
	m.mu.Lock()
	mem, ok := m.members[addr]
	changed := ok && mem != m.self && (mem.kind != k || mem.raft != raftAddr)
	if changed {
		mem.kind, mem.raft = k, raftAddr
	}
	m.mu.Unlock()
	if changed {
		m.log.Info("cluster: member kind", "member", addr, "nacosd", k == KindNacosd, "raft", raftAddr)
		m.notify()
	}
}

// Kind returns what a member runs and, for nacosd, its raft address.
func (m *Manager) Kind(addr string) (Kind, string) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if mem, ok := m.members[addr]; ok {
		if mem == m.self {
			return KindNacosd, m.cfg.RaftAddr
		}
		return mem.kind, mem.raft
	}
	return KindUnknown, ""
}

// IsNacosd reports whether a member is known to run nacosd (it announced
// its raft address).
func (m *Manager) IsNacosd(addr string) bool {
	k, _ := m.Kind(addr)
	return k == KindNacosd
}

// RaftLeaderSeen returns a raft leader some nacosd member named when it
// answered a report, "" if none did.
func (m *Manager) RaftLeaderSeen() string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.leader
}

// RaftAddr is this node's announced raft address.
func (m *Manager) RaftAddr() string { return m.cfg.RaftAddr }

// InIPList reports whether self is in the member list (else /v1/cs/health
// reports DOWN).
func (m *Manager) InIPList() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.inIPList
}
