package server

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/internal/connlimit"
	"github.com/nacosd/nacosd/server/httpapi"
)

// DefaultHeaderTimeout is Tomcat's connectionTimeout: a connection whose
// request (head and body) has not arrived within it is closed. It runs from
// the first byte of a request (IdleTimeout covers the wait before it), so
// long polls held after their request was read are not affected.
const DefaultHeaderTimeout = 20 * time.Second

// fdReserve is kept free of client connections for the raft transport,
// data files, the push socket and outgoing node-to-node calls.
const fdReserve = 512

// connLimits returns the most connections the HTTP listener serves (hard:
// beyond it fasthttp answers 503 and closes) and the level from which only
// reserved requests (health checks, node-to-node calls) are served (soft).
func connLimits(maxConns int) (hard, soft int) {
	hard = maxConns
	if hard <= 0 {
		var rl syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur > 2*fdReserve {
			hard = int(rl.Cur) - fdReserve
		} else {
			hard = 1024
		}
	}
	soft = hard - max(16, hard/20)
	return hard, max(1, soft)
}

// quietUnderPressure is how long a new connection may stay silent while the
// connection table is nearly full (connlimit.SetPressure); otherwise it has
// HeaderTimeout. A real client sends its request at once.
const quietUnderPressure = 2 * time.Second

// pressureLevel is where the table counts as nearly full: halfway into the
// last tenth before the hard limit, below the soft level (95 %) from which
// ordinary requests get 503, so that a flood of silent connections is cut
// before it pushes the server there.
func pressureLevel(hard, soft int) int {
	return max(1, soft-(hard-soft))
}

// perSourceLimit is the most connections one address may hold: given, or
// a quarter of the table (never below 64); a negative value means none. A
// client host needs a few (a long poll, a keep-alive pool); many clients
// behind one NAT address need more, which a quarter of the table leaves.
func perSourceLimit(configured, hard int) int {
	switch {
	case configured < 0:
		return 0
	case configured > 0:
		return configured
	}
	return max(64, hard/4)
}

// localHost reports the loopback addresses of this host itself (127.0.0.1,
// ::1): not limited per source (local tools, benchmarks and sidecars may
// hold thousands of connections, and a local process can exhaust the
// descriptors anyway).
func localHost(a netip.Addr) bool {
	return a == netip.AddrFrom4([4]byte{127, 0, 0, 1}) || a == netip.IPv6Loopback()
}

// refuseSource answers a connection over the per-source limit, as fasthttp
// answers one over its Concurrency, with its own message.
func refuseSource(c net.Conn) {
	const msg = "too many connections from this address"
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nDate: "+
		time.Now().UTC().Format(http.TimeFormat)+"\r\nContent-Type: text/plain\r\nContent-Length: "+
		strconv.Itoa(len(msg))+"\r\n\r\n"+msg)
}

// refuseConn answers a connection over the hard limit as fasthttp answers
// one over its Concurrency (Server.writeFastError), and the listener closes
// it. fasthttp's own limit only counts the connections it serves; held
// long polls have left it (server/httpapi/held.go).
func refuseConn(c net.Conn) {
	const msg = "The connection cannot be served because Server.Concurrency limit exceeded"
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nDate: "+
		time.Now().UTC().Format(http.TimeFormat)+"\r\nContent-Type: text/plain\r\nContent-Length: "+
		strconv.Itoa(len(msg))+"\r\n\r\n"+msg)
}

// shedLoad answers 503 (Spring's /error JSON, "Connection: close") to
// ordinary requests while more than soft connections are open, keeping the
// remaining slots for health checks and calls carrying the server identity.
func shedLoad(ln *connlimit.Listener, soft int, contextPath string, isNode func(c *fiber.Ctx) bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if ln.Open() <= int64(soft) || reserved(c.Path(), contextPath) || isNode(c) {
			return c.Next()
		}
		c.Set(fiber.HeaderConnection, "close")
		c.Context().SetConnectionClose()
		return httpapi.SendSpringError(c, fiber.StatusServiceUnavailable, "server is overloaded, please try again later")
	}
}

// reserved paths: liveness/readiness and the health endpoints of each module.
func reserved(path, contextPath string) bool {
	p := strings.TrimPrefix(path, contextPath)
	return strings.HasPrefix(p, "/v1/console/health/") || p == "/v1/cs/health" || p == "/v1/core/cluster/health" ||
		p == "/v1/ns/health/server" || p == "/v1/ns/operator/metrics" || strings.HasPrefix(p, "/actuator/health")
}

// nodeBody reports whether a request may send a node-to-node body: with
// auth on only one carrying the server identity (httpapi.HeaderReceived).
func (s *Server) nodeBody(h *fasthttp.RequestHeader) bool {
	a := s.auth
	return a == nil || !a.Enabled() || a.Identity().Verify(func(k string) string { return string(h.Peek(k)) })
}
