package push

import (
	"github.com/nacosd/nacosd/compat"

	"net"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Subscriber is one UDP push target (Java PushClient), registered by
// instance/list with udpPort > 0 for an agent that canEnablePush (§5.1).
type Subscriber struct {
	// NamespaceID is the namespace the service lives in.
	NamespaceID string
	// Service is the grouped service name "group@@svc".
	Service string
	// Clusters is the raw clusters parameter of instance/list.
	Clusters string
	// Agent is the User-Agent (or Client-Version) of the subscriber.
	Agent string
	// App is the app parameter (or header) of instance/list.
	App string
	// Tenant is the tid parameter of instance/list.
	Tenant string
	// IP is the clientIP parameter; Subscribe turns "" into 127.0.0.1 and IP
	// literals into Java's InetAddress.getHostAddress form.
	IP string
	// Port is the udpPort parameter.
	Port int
	// Source is the address the subscribing request came from ("" when
	// unknown). Pushes go to Source:Port, not IP:Port, unless Source lies in
	// Config.TrustedSources: a subscribe naming a third party's clientIP
	// made Java (and nacosd) send it every change of the service, 34× the
	// request's bytes (issue 26 item 9). Refreshes keep the latest Source.
	Source string
	// LastRef is the time of the last registration or refresh; set by the
	// service.
	LastRef time.Time
}

// AddrStr is "ip:port" as Java PushClient.getAddrStr (no IPv6 brackets).
func (s Subscriber) AddrStr() string { return s.IP + ":" + strconv.Itoa(s.Port) }

// subKey identifies a subscriber within its "ns##svc" map. Java keys by
// "serviceName: s, clusters: c, address: /ip:port, agent: a" (§5.1).
type subKey struct {
	clusters, ip, agent string
	port                int
}

// serviceSubs is one inner map of Java's clientMap. Java never removes the
// inner maps, so neither do we: their number sizes the outer table.
type serviceSubs struct {
	seq  int64 // creation order, for Java bin order
	hash int32 // Java hashCode of "ns##svc"
	peak int   // most subscribers held at once: sizes the inner table
	m    map[subKey]*subEntry
}

// subEntry is one stored subscriber.
type subEntry struct {
	sub  Subscriber
	seq  int64 // insertion order, for Java bin order
	hash int32 // Java hashCode of PushClient.toString()
}

// serviceKey is Java UtilsAndCommons.assembleFullServiceName.
func serviceKey(namespaceID, service string) string { return namespaceID + "##" + service }

// Subscribe adds sub or, when one with the same service, clusters, address
// and agent exists, refreshes its LastRef. It copies every string, never does
// I/O and ignores ports outside 1..65535 (Java's InetSocketAddress throws
// there, so instance/list registers nothing and answers cacheMillis 3000).
func (s *Service) Subscribe(sub Subscriber) {
	if sub.Port <= 0 || sub.Port > 65535 {
		return
	}
	c := Subscriber{
		NamespaceID: strings.Clone(sub.NamespaceID),
		Service:     strings.Clone(sub.Service),
		Clusters:    strings.Clone(sub.Clusters),
		Agent:       strings.Clone(sub.Agent),
		App:         strings.Clone(sub.App),
		Tenant:      strings.Clone(sub.Tenant),
		IP:          normalizeIP(sub.IP),
		Port:        sub.Port,
		Source:      strings.Clone(sub.Source),
	}
	k := subKey{clusters: c.Clusters, ip: c.IP, agent: c.Agent, port: c.Port}
	sk := serviceKey(c.NamespaceID, c.Service)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	now := s.cfg.Clock.Now()
	ss := s.subs[sk]
	if ss == nil {
		s.seq++
		ss = &serviceSubs{seq: s.seq, hash: compat.JavaStringHash(sk), m: make(map[subKey]*subEntry)}
		s.subs[sk] = ss
	}
	if old, ok := ss.m[k]; ok {
		old.sub.LastRef = now // Java refresh(): app and tenant stay as first registered
		old.sub.Source = c.Source
		return
	}
	c.LastRef = now
	s.seq++
	ss.m[k] = &subEntry{sub: c, seq: s.seq, hash: compat.JavaStringHash(pushClientString(c))}
	ss.peak = max(ss.peak, len(ss.m))
}

// ttl is the subscriber lifetime (Java switchDomain.getPushCacheMillis).
func (s *Service) ttl() time.Duration {
	if s.cfg.SubscriberTTLFunc != nil {
		return s.cfg.SubscriberTTLFunc()
	}
	return s.cfg.SubscriberTTL
}

// zombie is Java PushClient.zombie: now - lastRefTime > pushCacheMillis.
func zombie(sub *Subscriber, now time.Time, ttl time.Duration) bool {
	return now.Sub(sub.LastRef) > ttl
}

// Subscribers returns copies of the live subscribers of exactly this
// service, in Java iteration order (see Stored).
func (s *Service) Subscribers(namespaceID, service string) []Subscriber {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.subs[serviceKey(namespaceID, service)]
	if ss == nil {
		return nil
	}
	return s.appendInner(nil, ss, true)
}

// All returns copies of every live subscriber, in Java iteration order (see
// Stored).
func (s *Service) All() []Subscriber { return s.list(true) }

// Stored returns copies of every stored subscriber, including zombies that
// neither the sweeper nor a push of their service has removed yet, in the
// order Java iterates its ConcurrentHashMaps (outer "ns##svc" map, then each
// inner map, by hash bin and then insertion). This is what Java's
// GET /v1/ns/service/subscribers lists (PushService.getClientsFuzzy, §3.4):
// naming should build that endpoint on Stored, filtering fuzzily.
func (s *Service) Stored() []Subscriber { return s.list(false) }

func (s *Service) list(liveOnly bool) []Subscriber {
	s.mu.Lock()
	defer s.mu.Unlock()
	outer := make([]*serviceSubs, 0, len(s.subs))
	for _, ss := range s.subs {
		outer = append(outer, ss)
	}
	n := chmTableSize(16, len(s.subs))
	sort.Slice(outer, func(i, j int) bool {
		bi, bj := chmBin(outer[i].hash, n), chmBin(outer[j].hash, n)
		if bi != bj {
			return bi < bj
		}
		return outer[i].seq < outer[j].seq
	})
	var out []Subscriber
	for _, ss := range outer {
		out = s.appendInner(out, ss, liveOnly)
	}
	return out
}

// appendInner appends the subscribers of ss in Java bin order. s.mu held.
func (s *Service) appendInner(out []Subscriber, ss *serviceSubs, liveOnly bool) []Subscriber {
	now, ttl := s.cfg.Clock.Now(), s.ttl()
	inner := make([]*subEntry, 0, len(ss.m))
	for _, e := range ss.m {
		if !liveOnly || !zombie(&e.sub, now, ttl) {
			inner = append(inner, e)
		}
	}
	n := chmTableSize(2048, ss.peak) // new ConcurrentHashMap<>(1024) has 2048 bins
	sort.Slice(inner, func(i, j int) bool {
		bi, bj := chmBin(inner[i].hash, n), chmBin(inner[j].hash, n)
		if bi != bj {
			return bi < bj
		}
		return inner[i].seq < inner[j].seq
	})
	for _, e := range inner {
		out = append(out, e.sub)
	}
	return out
}

// sweepLocked removes zombies (Java removeClientIfZombie). s.mu held.
func (s *Service) sweepLocked(now time.Time) {
	s.sweepBudgetsLocked(now)
	for sk, last := range s.lastRound {
		if now.Sub(last) >= s.cfg.Debounce {
			delete(s.lastRound, sk)
		}
	}
	ttl := s.ttl()
	for _, ss := range s.subs {
		for k, e := range ss.m {
			if zombie(&e.sub, now, ttl) {
				delete(ss.m, k)
			}
		}
	}
}

// pushClientString is Java PushClient.toString(), the inner map key, with
// InetSocketAddress.toString() as JDK 8 prints it ("/ip:port"; an
// unresolved host name "host:port").
func pushClientString(c Subscriber) string {
	addr := c.IP + ":" + strconv.Itoa(c.Port)
	if net.ParseIP(c.IP) != nil {
		addr = "/" + addr
	}
	return "serviceName: " + c.Service + ", clusters: " + c.Clusters + ", address: " + addr + ", agent: " + c.Agent
}

// chmTableSize is the table size of a java.util.concurrent.ConcurrentHashMap
// that started with initial bins and once held peak entries: it doubles when
// the count reaches 3/4 of the table.
func chmTableSize(initial, peak int) int {
	n := initial
	for peak >= n-n/4 {
		n *= 2
	}
	return n
}

// chmBin is the ConcurrentHashMap bin of a key with hashCode h.
func chmBin(h int32, n int) int {
	u := uint32(h)
	return int((u^(u>>16))&0x7fffffff) & (n - 1)
}

// normalizeIP maps "" to the loopback address (Java InetSocketAddress("",
// port)) and IP literals to Java getHostAddress text; host names are kept and
// resolved when a push is sent.
func normalizeIP(ip string) string {
	ip = strings.TrimSpace(ip)
	if ip == "" {
		return "127.0.0.1"
	}
	if p := net.ParseIP(ip); p != nil {
		return javaHostAddress(p, "")
	}
	return strings.Clone(ip)
}

// javaHostAddress formats ip as Java InetAddress.getHostAddress: dotted quad
// for IPv4 (and IPv4-mapped IPv6), otherwise eight uncompressed lowercase hex
// groups, plus "%zone" when scoped.
func javaHostAddress(ip net.IP, zone string) string {
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	ip = ip.To16()
	if ip == nil {
		return ""
	}
	var b strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strconv.FormatUint(uint64(ip[i])<<8|uint64(ip[i+1]), 16))
	}
	if zone != "" {
		b.WriteByte('%')
		b.WriteString(zone)
	}
	return b.String()
}
