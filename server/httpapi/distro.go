package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/distro"
)

// Distro is what the /v1/ns/distro endpoints, the service status sync and
// DistroFilter need of the AP protocol (package distro).
type Distro interface {
	Responsible(groupedService string) bool
	MapSrv(groupedService string) string
	OnDatums(body []byte, from distro.Sender) error
	OnChecksums(source, view string, sums map[string]string)
	Datums(keys []string) []byte
	AllDatums() []byte
	OnServiceStatus(body []byte, hasMember func(string) bool) (distro.StatusResult, error)
	OnBeats(body []byte) error
	Refresh(ctx context.Context, owner string, ref distro.ServiceRef) error
}

// Proxy sends a request to another member (DistroFilter's HttpClient.request)
// and returns its status and body; an error is a transport failure.
type Proxy func(ctx context.Context, method, addr, path string, query url.Values, header http.Header, timeout time.Duration) (int, []byte, error)

// DistroDeps are the collaborators of the distro endpoints and filter.
type DistroDeps struct {
	Distro Distro
	// Cluster says whether the node runs in cluster mode (the filter only
	// proxies then) and whether an address is a member.
	Standalone bool
	HasMember  func(addr string) bool
	// Proxy forwards a @CanDistro request to its owner; Self is this
	// node's member address (Request-Source).
	Proxy Proxy
	Self  string
}

type distroHandlers struct{ DistroDeps }

// routes are the node-to-node endpoints of Distro (nacosd and Java
// members call them; open with auth off, the server identity with it on).
func (h *distroHandlers) routes(node *Secured) []Route {
	return []Route{
		route(fiber.MethodPut, "/v1/ns/distro/datum", Local, node, h.putDatum),
		route(fiber.MethodPut, "/v1/ns/distro/checksum", Local, node, h.checksum),
		route(fiber.MethodGet, "/v1/ns/distro/datum", Local, node, h.getDatum),
		route(fiber.MethodGet, "/v1/ns/distro/datums", Local, node, h.datums),
		route(fiber.MethodPost, "/v1/ns/service/status", Local, node, h.serviceStatus),
	}
}

// beats is PUT /v1/nacosd/distro/beats: the last beats of the instances
// of the services the sender owns (distro/beats.go; between nacosd
// members only).
func (h *distroHandlers) beats(c *fiber.Ctx) error {
	body, err := requestBody(c)
	if err != nil {
		return err
	}
	if err := h.Distro.OnBeats(body); err != nil {
		return compat.IllegalArgument(err.Error())
	}
	return SendText(c, "ok")
}

// requestBody is a @RequestBody as Tomcat hands it over: the raw bytes
// (ParamLimit already undid a real Content-Encoding; Java's servers send
// Content-Encoding: gzip over plain bodies), inflated only when they really
// are gzip, and then to at most NodeBodyLimit bytes (413 beyond).
func requestBody(c *fiber.Ctx) ([]byte, error) {
	b := c.Request().Body()
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, compat.ServerError("JSON parse error: " + err.Error())
		}
		out, err := readAtMost(zr, NodeBodyLimit)
		if errors.Is(err, errBodyTooLarge) {
			return nil, &compat.Error{Status: fiber.StatusRequestEntityTooLarge, Body: tooLargeMessage + " (after decoding its gzip body)"}
		}
		if err != nil {
			return nil, compat.ServerError("JSON parse error: " + err.Error())
		}
		return out, nil
	}
	return b, nil
}

// jsonRequestBody checks a @RequestBody as Spring's Jackson converter does.
func jsonRequestBody(c *fiber.Ctx, signature string) ([]byte, error) {
	ct := string(c.Request().Header.ContentType())
	body, err := requestBody(c)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, compat.ServerError("Required request body is missing: " + signature)
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	if !isJSONContentType(ct) {
		return nil, compat.ServerError("Content type '" + strings.ReplaceAll(ct, "; ", ";") + "' not supported")
	}
	return body, nil
}

const (
	sigOnSyncDatum  = "public org.springframework.http.ResponseEntity com.alibaba.nacos.naming.controllers.DistroController.onSyncDatum(java.util.Map<java.lang.String, com.alibaba.nacos.naming.consistency.Datum<com.alibaba.nacos.naming.core.Instances>>) throws java.lang.Exception"
	sigSyncChecksum = "public org.springframework.http.ResponseEntity com.alibaba.nacos.naming.controllers.DistroController.syncChecksum(java.lang.String,java.util.Map<java.lang.String, java.lang.String>)"
	sigGetDatum     = "public org.springframework.http.ResponseEntity com.alibaba.nacos.naming.controllers.DistroController.get(java.lang.String) throws java.lang.Exception"
)

// putDatum is PUT /v1/ns/distro/datum (naming-v1.md §6.6).
func (h *distroHandlers) putDatum(c *fiber.Ctx) error {
	body, err := jsonRequestBody(c, sigOnSyncDatum)
	if err != nil {
		return err
	}
	from := distro.Sender{Addr: string(c.Request().Header.Peek(distro.HeaderSource)),
		Partial: len(c.Request().Header.Peek(distro.HeaderPartial)) > 0,
		Removed: string(c.Request().Header.Peek(distro.HeaderRemoved))}
	if err := h.Distro.OnDatums(body, from); err != nil {
		if errors.Is(err, distro.ErrEmptyEntity) {
			return compat.ServerError(err.Error())
		}
		var refused distro.ErrRefused
		if errors.As(err, &refused) { // a nacosd sender's lists this node takes from another member
			return &compat.Error{Status: fiber.StatusConflict, Body: err.Error()}
		}
		var ce *compat.Error
		if errors.As(err, &ce) {
			return err
		}
		return compat.ServerError("JSON parse error: " + err.Error())
	}
	return SendText(c, "ok")
}

// checksum is PUT /v1/ns/distro/checksum?source=ip:port (§6.7).
func (h *distroHandlers) checksum(c *fiber.Ctx) error {
	p := ParamsOf(c)
	source, err := p.SpringRequired("source")
	if err != nil {
		return err
	}
	body, err := jsonRequestBody(c, sigSyncChecksum)
	if err != nil {
		return err
	}
	var sums map[string]string
	if err := json.Unmarshal(body, &sums); err != nil {
		return compat.ServerError("JSON parse error: " + err.Error())
	}
	h.Distro.OnChecksums(source, p.Spring(distro.ViewParam, ""), sums)
	return SendText(c, "ok")
}

// getDatum is GET /v1/ns/distro/datum with a JSON body {"keys":"k1,k2"}.
func (h *distroHandlers) getDatum(c *fiber.Ctx) error {
	body, err := requestBody(c)
	if err != nil {
		return err
	}
	if len(body) == 0 {
		return compat.ServerError("Required request body is missing: " + sigGetDatum)
	}
	keys, err := distro.QueryBody(body)
	if err != nil {
		return compat.ServerError(err.Error())
	}
	return sendDatums(c, h.Distro.Datums(keys))
}

// datums is GET /v1/ns/distro/datums (§6.8).
func (h *distroHandlers) datums(c *fiber.Ctx) error {
	return sendDatums(c, h.Distro.AllDatums())
}

// sendDatums answers a ResponseEntity<byte[]> (Spring's byte-array
// converter: application/octet-stream unless the client asked otherwise).
func sendDatums(c *fiber.Ctx, b []byte) error {
	c.Set(fiber.HeaderContentType, "application/octet-stream")
	c.Set(distro.HeaderSource, "nacosd") // a nacosd member's lists carry its true last beats (distro/beats.go)
	return c.Send(b)
}

// serviceStatus is POST /v1/ns/service/status (§4.4).
func (h *distroHandlers) serviceStatus(c *fiber.Ctx) error {
	has := h.HasMember
	if has == nil {
		has = func(string) bool { return false }
	}
	res, err := h.Distro.OnServiceStatus(c.Request().Body(), has)
	if err != nil {
		var nm distro.ErrNotMember
		if errors.As(err, &nm) {
			return compat.ServerError(err.Error())
		}
		return compat.ServerError(err.Error())
	}
	return SendText(c, string(res))
}

// distroFilter is DistroFilter (naming-v1.md §1.2) for an AP write: a
// request for a service this node does not own goes to its owner, whose
// answer is relayed; a request a peer already redirected here is refused.
func (g *gate) distroFilter(c *fiber.Ctx, run func() error) error {
	if target, ok := g.distroTarget(c); ok {
		return g.distroProxy(c, target)
	}
	return run()
}

// distroTarget returns the owner of the request's service when it is not
// this node (and the request may be proxied there).
func (g *gate) distroTarget(c *fiber.Ctx) (string, bool) {
	d := g.Distro
	if d.Standalone || d.Distro == nil || g.forwarded(c) {
		return "", false
	}
	svc, _ := groupedServiceName(ParamsOf(c))
	if svc == "" || d.Distro.Responsible(svc) {
		return "", false
	}
	return d.Distro.MapSrv(svc), true
}

// distroProxy sends the request to target, the service's owner, as Java's
// DistroFilter does (its headers, encoding=UTF-8&nofix=1, the parameters
// in a form body), and relays the answer.
func (g *gate) distroProxy(c *fiber.Ctx, target string) error {
	if strings.Contains(userAgent(c), "Nacos-Server") {
		return SendSpringError(c, fiber.StatusBadRequest, "receive invalid redirect request from peer "+c.IP())
	}
	query := url.Values{}
	c.Request().URI().QueryArgs().VisitAll(func(k, v []byte) {
		if !query.Has(string(k)) {
			query.Set(string(k), string(v))
		}
	})
	if !c.Request().Header.IsGet() {
		c.Request().PostArgs().VisitAll(func(k, v []byte) {
			if !query.Has(string(k)) {
				query.Set(string(k), string(v))
			}
		})
	}
	query.Set("encoding", "UTF-8")
	query.Set("nofix", "1")
	header := http.Header{}
	c.Request().Header.VisitAll(func(k, v []byte) {
		switch strings.ToLower(string(k)) {
		case "host", "content-length", "connection", "transfer-encoding", "content-type", "user-agent", "client-version", "accept-charset":
			return
		}
		header.Add(string(k), string(v))
	})
	header.Set("Content-Type", "application/x-www-form-urlencoded;charset=UTF-8")
	header.Set("Request-Source", g.Distro.Self)
	if isBeatPath(string(c.Request().URI().Path())) && header.Get(HeaderBeatReceived) == "" {
		// the owner tells a beat held up on its way (a partition) from one
		// sent after a deregistration (naming.BeatForm.ReceivedAt)
		header.Set(HeaderBeatReceived, strconv.FormatInt(c.Context().Time().UnixMilli(), 10))
	}
	header.Set("Accept-Charset", "UTF-8")
	status, body, err := g.Distro.Proxy(c.UserContext(), c.Method(), target, string(c.Request().URI().Path()), query, header, 2*time.Second)
	c.Set(fiber.HeaderContentType, "application/json;charset=UTF-8")
	if err != nil {
		return c.Status(fiber.StatusInternalServerError).SendString(javaTransportError(err))
	}
	if status >= 200 && status <= 299 {
		g.refreshAfterProxy(c, target)
	}
	return c.Status(status).Send(body)
}

// refreshAfterProxy takes the owner's list of the service a proxied write
// changed before its answer is relayed, so that the client reads its own
// write on this node (Distro.Refresh). Beats are left out: they change no
// list a client reads back (a beat of an unknown instance makes the client
// register it, and that register is refreshed). A failed fetch is only
// logged: the owner took the write, and its sync follows.
func (g *gate) refreshAfterProxy(c *fiber.Ctx, owner string) {
	if isBeatPath(string(c.Request().URI().Path())) {
		return
	}
	p := ParamsOf(c)
	svc, _ := groupedServiceName(p)
	ref := distro.ServiceRef{NamespaceID: namespace(p), Service: svc}
	if err := g.Distro.Distro.Refresh(c.UserContext(), owner, ref); err != nil {
		g.Logger.Warn("distro: could not take the owner's list after a proxied write; this node shows it after the owner's sync",
			"service", svc, "namespace", ref.NamespaceID, "owner", owner, "err", err)
	}
}

// javaTransportError is e.toString() of the Java HTTP client's exception
// for a failed proxy call.
func javaTransportError(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, "connection refused"):
		return "java.net.ConnectException: Connection refused (Connection refused)"
	case strings.Contains(s, "deadline exceeded"), strings.Contains(s, "timeout"):
		return "java.net.SocketTimeoutException: Read timed out"
	}
	return "java.io.IOException: " + s
}

// HeaderBeatReceived is, on a beat proxied to the service's owner, when
// the member the client sent it to received it (unix ms).
const HeaderBeatReceived = "X-Nacosd-Beat-Received"

// isBeatPath reports whether path is an instance beat.
func isBeatPath(path string) bool {
	return strings.HasSuffix(path, "/beat") || strings.HasSuffix(path, "/clientBeat")
}
