package push

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock"
)

// gzipThreshold: datagrams of at least this many bytes are gzip-compressed
// (Java PushService.compressIfNecessary, §5.4).
const gzipThreshold = 1024

// resolveTimeout bounds the lookup of a subscriber registered with a host
// name instead of an IP literal.
const resolveTimeout = 2 * time.Second

// ackKey is Java getAckKey "ip,port,lastRefTime".
type ackKey struct {
	ip   string
	port int
	ref  int64
}

func (k ackKey) String() string {
	return k.ip + "," + strconv.Itoa(k.port) + "," + strconv.FormatInt(k.ref, 10)
}

// ackEntry is one sent push waiting for its ack (Java Receiver.AckEntry).
type ackEntry struct {
	key     ackKey
	addr    *net.UDPAddr
	data    []byte // the datagram exactly as sent, possibly gzipped
	retries int    // sends so far
	sentAt  time.Time
	pseq    int64 // insertion order of the key, for Java iteration order
	timer   clock.Timer
}

// ServiceChanged schedules one push of the service Debounce from now unless
// one is already scheduled (§5.3). It never blocks or does I/O, so it may be
// called from the raft apply path and under the caller's locks.
func (s *Service) ServiceChanged(namespaceID, service string) {
	var kb [160]byte
	k := append(append(append(kb[:0], namespaceID...), "##"...), service...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	// With nobody subscribed a round would send nothing: skip it. A client
	// subscribing later is answered the state after this change by the
	// instance/list that subscribes it (Subscribe comes before its render).
	if ss := s.subs[string(k)]; ss == nil || len(ss.m) == 0 {
		return
	}
	if _, ok := s.scheduled[string(k)]; ok {
		return
	}
	sk := string(k)
	if !s.cfg.LeadingEdge {
		s.scheduled[sk] = s.cfg.Clock.AfterFunc(s.cfg.Debounce, func() { s.runRound(sk) })
		return
	}
	if s.running[sk] {
		s.dirty[sk] = true
		return
	}
	s.scheduleLeadingLocked(sk)
}

// scheduleLeadingLocked schedules a round now, or at the end of the current
// debounce window when a round started less than Debounce ago.
func (s *Service) scheduleLeadingLocked(sk string) {
	delay := time.Duration(0)
	if last, ok := s.lastRound[sk]; ok {
		if since := s.cfg.Clock.Now().Sub(last); since < s.cfg.Debounce {
			delay = s.cfg.Debounce - since
		}
	}
	s.scheduled[sk] = s.cfg.Clock.AfterFunc(delay, func() { s.runRound(sk) })
}

// runRound is the debounced push task for one "ns##svc". The scheduled
// marker is removed when the round ends, so changes during the round are
// dropped, as in Java (the round sends the state at execution time).
func (s *Service) runRound(sk string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.rounds.Add(1)
	now, ttl := s.cfg.Clock.Now(), s.ttl()
	if s.cfg.LeadingEdge {
		delete(s.scheduled, sk)
		s.running[sk] = true
		s.lastRound[sk] = now
	}
	var targets []Subscriber
	if ss := s.subs[sk]; ss != nil {
		for k, e := range ss.m {
			if zombie(&e.sub, now, ttl) {
				delete(ss.m, k)
			}
		}
		targets = s.appendInner(nil, ss, false) // Java iterates clients in map order
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.cfg.LeadingEdge {
			delete(s.running, sk)
			if s.dirty[sk] && !s.closed {
				delete(s.dirty, sk)
				s.scheduleLeadingLocked(sk)
			}
		} else {
			delete(s.scheduled, sk)
		}
		s.mu.Unlock()
		s.rounds.Done()
	}()
	if len(targets) == 0 {
		if s.cfg.LeadingEdge { // nothing was sent: the window stays open
			s.mu.Lock()
			delete(s.lastRound, sk)
			s.mu.Unlock()
		}
		return
	}
	s.pushTo(targets, s.nano())
}

// pushTo renders, encodes and sends one round to targets, all with the same
// envelope lastRefTime.
func (s *Service) pushTo(targets []Subscriber, ref int64) {
	// Datagrams are memoised by payload within the round: subscribers with
	// the same agent form and clusters usually render identical bytes, and
	// gzip dominates the cost. The bytes sent are the same either way.
	byPayload := make(map[string][]byte)
	var byAgent map[string][]byte
	if s.ttl() >= 20*time.Second {
		// Java reuses the datagram per serviceName@@@@agent when
		// defaultPushCacheMillis >= 20000 (ignoring clusters).
		byAgent = make(map[string][]byte)
	}
	for _, sub := range targets {
		data, ok := byAgent[sub.Agent]
		if !ok {
			payload, err := s.cfg.Render(sub)
			if err != nil {
				s.log.Warn("push: render failed, subscriber skipped",
					"service", sub.Service, "addr", sub.AddrStr(), "err", err)
				continue
			}
			if data, ok = byPayload[string(payload)]; !ok {
				data = s.encodeDatagram(payload, ref)
				byPayload[string(payload)] = data
			}
			if byAgent != nil {
				byAgent[sub.Agent] = data
			}
		}
		addr, err := s.resolve(sub)
		if err != nil {
			s.log.Warn("push: cannot resolve subscriber address, skipped",
				"service", sub.Service, "addr", sub.AddrStr(), "err", err)
			continue
		}
		e := &ackEntry{
			key:  ackKey{ip: javaHostAddress(addr.IP, addr.Zone), port: addr.Port, ref: ref},
			addr: addr,
			data: data,
		}
		s.udpPush(e, true)
	}
}

// resolve returns the UDP address sub's pushes go to (targetHost); only
// host names need a lookup.
func (s *Service) resolve(sub Subscriber) (*net.UDPAddr, error) {
	host := s.targetHost(sub)
	if ip := net.ParseIP(host); ip != nil {
		return &net.UDPAddr{IP: ip, Port: sub.Port}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, errors.New("no addresses")
	}
	best := ips[0]
	for _, a := range ips { // Java prefers IPv4 by default
		if a.IP.To4() != nil {
			best = a
			break
		}
	}
	return &net.UDPAddr{IP: best.IP, Port: sub.Port, Zone: best.Zone}, nil
}

// udpPush is Java PushService.udpPush. first marks the initial send of a
// round (the cap applies only there); retransmissions come from check.
func (s *Service) udpPush(e *ackEntry, first bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if e.retries > s.cfg.MaxRetry {
		delete(s.pending, e.key)
		s.failed++
		s.mu.Unlock()
		s.log.Warn("push: max re-push times reached", "retries", e.retries, "key", e.key.String())
		return
	}
	if _, ok := s.pending[e.key]; !ok {
		if !first {
			// Acked between check and here; Java would re-add it (a race).
			s.mu.Unlock()
			return
		}
		if len(s.pending) >= s.cfg.MaxPending {
			s.total++
			s.failed++
			s.mu.Unlock()
			s.log.Warn("push: too many un-acked pushes, push dropped", "key", e.key.String())
			return
		}
		s.total++
	}
	if !s.spendLocked(e.addr.String(), len(e.data), s.cfg.Clock.Now()) {
		if cur, ok := s.pending[e.key]; ok && cur == e {
			delete(s.pending, e.key)
		}
		s.failed++
		s.capped++
		s.mu.Unlock()
		s.log.Debug("push: the target's byte budget is spent, push dropped", "key", e.key.String(), "bytes", len(e.data))
		return
	}
	if old, ok := s.pending[e.key]; ok {
		e.pseq = old.pseq // a put on an existing key keeps its bin position
	} else {
		s.pendingSeq++
		e.pseq = s.pendingSeq
	}
	s.pending[e.key] = e
	s.pendingPeak = max(s.pendingPeak, len(s.pending))
	e.sentAt = s.cfg.Clock.Now()
	s.sends++
	s.mu.Unlock()

	_, err := s.conn.WriteToUDP(e.data, e.addr)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.closed {
			return
		}
		if cur, ok := s.pending[e.key]; ok && cur == e {
			delete(s.pending, e.key)
		}
		s.failed++
		s.log.Warn("push: send failed", "key", e.key.String(), "err", err)
		return
	}
	s.log.Debug("push: sent", "key", e.key.String(), "bytes", len(e.data))
	e.retries++
	if s.closed {
		return
	}
	e.timer = s.cfg.Clock.AfterFunc(s.cfg.AckTimeout, func() { s.check(e) })
}

// check is Java Retransmitter: resend (or give up) while the key is un-acked.
func (s *Service) check(e *ackEntry) {
	s.mu.Lock()
	_, ok := s.pending[e.key]
	if s.closed || !ok {
		s.mu.Unlock()
		return
	}
	s.rounds.Add(1)
	s.mu.Unlock()
	defer s.rounds.Done()
	s.udpPush(e, false)
}

// encodeDatagram builds the Java HashMap envelope (key order type, data,
// lastRefTime, §5.4) around payload, gzipped when ≥ 1024 bytes.
func (s *Service) encodeDatagram(payload []byte, ref int64) []byte {
	b := make([]byte, 0, len(payload)+len(payload)/16+64)
	b = append(b, `{"type":"dom","data":`...)
	b = compat.AppendJavaString(b, string(payload))
	b = append(b, `,"lastRefTime":`...)
	b = strconv.AppendInt(b, ref, 10)
	b = append(b, '}')
	if len(b) < gzipThreshold {
		return b
	}
	var out bytes.Buffer
	out.Grow(len(b)/3 + 64)
	zw, _ := s.gzPool.Get().(*gzip.Writer)
	if zw == nil {
		zw = gzip.NewWriter(&out) // default level, as java.util.zip.GZIPOutputStream
	} else {
		zw.Reset(&out)
	}
	_, _ = zw.Write(b) // writes to a bytes.Buffer cannot fail
	_ = zw.Close()
	s.gzPool.Put(zw)
	return out.Bytes()
}
