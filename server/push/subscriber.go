package push

import (
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

// serviceKey is Java UtilsAndCommons.assembleFullServiceName.
func serviceKey(namespaceID, service string) string { return namespaceID + "##" + service }

// Subscribe adds sub or, when one with the same service, clusters, address
// and agent exists, refreshes its LastRef. It copies every string, never does
// I/O and ignores ports outside 1..65535.
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
	}
	k := subKey{clusters: c.Clusters, ip: c.IP, agent: c.Agent, port: c.Port}
	sk := serviceKey(c.NamespaceID, c.Service)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	now := s.cfg.Clock.Now()
	m := s.subs[sk]
	if m == nil {
		m = make(map[subKey]*Subscriber)
		s.subs[sk] = m
	}
	if old, ok := m[k]; ok {
		old.LastRef = now // Java refresh(): app and tenant stay as first registered
		return
	}
	c.LastRef = now
	m[k] = &c
}

// zombie is Java PushClient.zombie: now - lastRefTime > pushCacheMillis.
func (s *Service) zombie(sub *Subscriber, now time.Time) bool {
	return now.Sub(sub.LastRef) > s.cfg.SubscriberTTL
}

// Subscribers returns copies of the live subscribers of exactly this
// service, sorted by address then clusters then agent.
func (s *Service) Subscribers(namespaceID, service string) []Subscriber {
	s.mu.Lock()
	now := s.cfg.Clock.Now()
	var out []Subscriber
	for _, sub := range s.subs[serviceKey(namespaceID, service)] {
		if !s.zombie(sub, now) {
			out = append(out, *sub)
		}
	}
	s.mu.Unlock()
	sortSubscribers(out)
	return out
}

// All returns copies of every live subscriber, sorted by namespace, service,
// address, clusters and agent. Naming builds the fuzzy /service/subscribers
// match (§3.4) on top of it.
func (s *Service) All() []Subscriber {
	s.mu.Lock()
	now := s.cfg.Clock.Now()
	var out []Subscriber
	for _, m := range s.subs {
		for _, sub := range m {
			if !s.zombie(sub, now) {
				out = append(out, *sub)
			}
		}
	}
	s.mu.Unlock()
	sortSubscribers(out)
	return out
}

func sortSubscribers(subs []Subscriber) {
	sort.Slice(subs, func(i, j int) bool {
		a, b := subs[i], subs[j]
		if a.NamespaceID != b.NamespaceID {
			return a.NamespaceID < b.NamespaceID
		}
		if a.Service != b.Service {
			return a.Service < b.Service
		}
		if a.IP != b.IP {
			return a.IP < b.IP
		}
		if a.Port != b.Port {
			return a.Port < b.Port
		}
		if a.Clusters != b.Clusters {
			return a.Clusters < b.Clusters
		}
		return a.Agent < b.Agent
	})
}

// sweepLocked removes zombies (Java removeClientIfZombie) and empty
// service maps. s.mu must be held.
func (s *Service) sweepLocked(now time.Time) {
	for sk, m := range s.subs {
		for k, sub := range m {
			if s.zombie(sub, now) {
				delete(m, k)
			}
		}
		if len(m) == 0 {
			delete(s.subs, sk)
		}
	}
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
