package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
)

// Cluster is what the core and console endpoints need of cluster
// membership. Implementations must be safe for concurrent use; the returned
// members are copies the handlers may keep.
type Cluster interface {
	// Self is this node.
	Self() compat.Member
	// Members lists every member, self included (ServerMemberManager's
	// serverList plus self).
	Members() []compat.Member
	// Standalone reports standalone mode.
	Standalone() bool
	// Ready is the readiness probe: nil when ready, else an error whose
	// message is the body of the 500 (console-auth-core-v1.md §5, e.g.
	// "Config and Naming are not in readiness").
	Ready() error
}

// NacosVersion is the version the server reports.
const NacosVersion = "1.4.8"

type coreHandlers struct{ cl Cluster }

// MountCore registers the /v1/core/cluster and /v1/console health and state
// endpoints on r, the context-path group (console-auth-core-v1.md §4.2, §5).
// Other methods on these paths answer as Spring does through
// ConsoleExceptionHandler: 500 "caused: Request method 'X' not supported;".
func MountCore(r fiber.Router, cl Cluster) {
	h := &coreHandlers{cl}
	routes := []struct {
		method, path string
		handler      fiber.Handler
	}{
		{fiber.MethodGet, "/v1/core/cluster/self", h.self},
		{fiber.MethodGet, "/v1/core/cluster/nodes", h.nodes},
		{fiber.MethodGet, "/v1/core/cluster/simple/nodes", h.simpleNodes},
		{fiber.MethodGet, "/v1/core/cluster/health", h.health},
		{fiber.MethodPost, "/v1/core/cluster/report", h.report},
		{fiber.MethodGet, "/v1/console/health/liveness", h.liveness},
		{fiber.MethodGet, "/v1/console/health/readiness", h.readiness},
		{fiber.MethodGet, "/v1/console/server/state", h.serverState},
		{fiber.MethodPut, "/v1/core/ops/log", opsLog("200")},
		{fiber.MethodGet, "/v1/cmdb/ops/label", cmdbLabel},
		{fiber.MethodGet, "/actuator/health", h.actuatorHealth},
		{fiber.MethodGet, "/actuator", h.actuatorIndex},
		{fiber.MethodGet, "/actuator/", h.actuatorIndex},
	}
	for _, rt := range routes {
		r.Add(rt.method, rt.path, rt.handler)
		if rt.method == fiber.MethodGet { // Spring maps HEAD onto GET handlers
			r.Add(fiber.MethodHead, rt.path, rt.handler)
		}
		r.All(rt.path, methodNotSupported)
	}
}

// opsLog is PUT .../ops/log (CoreOpsController, ConfigOpsController,
// OperatorController): logName and logLevel are required @RequestParams and
// the answer is the controller's constant. nacosd logs through one slog
// handler, whose level is set at start (nacosd.log-level); Java's per-logger
// levels are not kept, so the call changes nothing.
func opsLog(answer string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := ParamsOf(c)
		if _, err := p.SpringRequired("logName"); err != nil {
			return err
		}
		if _, err := p.SpringRequired("logLevel"); err != nil {
			return err
		}
		return SendText(c, answer)
	}
}

// actuatorContentType is what Spring Boot 2.7's actuator answers to a
// client that does not ask for application/json.
const actuatorContentType = "application/vnd.spring-boot.actuator.v3+json"

func actuatorType(c *fiber.Ctx) string {
	if strings.Contains(c.Get(fiber.HeaderAccept), "application/json") {
		return ContentTypeJSON
	}
	return actuatorContentType
}

// actuatorHealth is Spring Boot's /actuator/health, the one endpoint Java
// Nacos 1.4.8 exposes by default: the aggregate status only (details are
// hidden). nacosd's status is its readiness.
func (h *coreHandlers) actuatorHealth(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, actuatorType(c))
	if h.cl != nil && h.cl.Ready() != nil {
		return c.Status(fiber.StatusServiceUnavailable).SendString(`{"status":"DOWN"}`)
	}
	return c.SendString(`{"status":"UP"}`)
}

// actuatorIndex is Spring Boot's /actuator links page: self and health, as
// seen from the request's host.
func (h *coreHandlers) actuatorIndex(c *fiber.Ctx) error {
	base := "http://" + string(c.Request().Host()) + strings.TrimSuffix(strings.TrimSuffix(string(c.Request().URI().Path()), "/"), "/actuator") + "/actuator"
	w := compat.NewJSON(256)
	link := func(name, href string, templated bool) {
		w.Key(name).BeginObject().Key("href").Str(href).Key("templated").Bool(templated).EndObject()
	}
	w.BeginObject().Key("_links").BeginObject()
	link("self", base, false)
	link("health-path", base+"/health/{*path}", true)
	link("health", base+"/health", false)
	w.EndObject().EndObject()
	c.Set(fiber.HeaderContentType, actuatorType(c))
	return c.Send(w.Bytes())
}

// cmdbLabel is GET /v1/cmdb/ops/label: entry and label are required
// (WebUtils.required); without a CMDB plugin (nacosd has none, Java loads
// none by default) the label has no value: 200, no body, no content type.
func cmdbLabel(c *fiber.Ctx) error {
	p := ParamsOf(c)
	if _, err := p.Required("entry"); err != nil {
		return err
	}
	if _, err := p.Required("label"); err != nil {
		return err
	}
	c.Response().Header.SetNoDefaultContentType(true)
	c.Status(fiber.StatusOK)
	return nil
}

// methodNotSupported is Spring's HttpRequestMethodNotSupportedException
// through ConsoleExceptionHandler (console-auth-core-v1.md §1.5).
func methodNotSupported(c *fiber.Ctx) error {
	return compat.ServerError("Request method '" + c.Method() + "' not supported")
}

func (h *coreHandlers) self(c *fiber.Ctx) error {
	return SendJSON(c, compat.RestResultOK(h.cl.Self().AppendJSON))
}

// allMembers is ServerMemberManager.allMembers: the members plus self, one per
// address.
func (h *coreHandlers) allMembers() []compat.Member {
	self := h.cl.Self()
	seen := map[string]bool{self.Address(): true}
	out := []compat.Member{self}
	for _, m := range h.cl.Members() {
		if a := m.Address(); !seen[a] {
			seen[a] = true
			out = append(out, m)
		}
	}
	return out
}

// nodes lists the members sorted by address; a non-blank keyword keeps those
// whose address equals or starts with it.
func (h *coreHandlers) nodes(c *fiber.Ctx) error {
	kw, _ := ParamsOf(c).Raw("keyword")
	blank := strings.TrimSpace(kw) == "" // StringUtils.isBlank
	members := h.allMembers()
	sort.SliceStable(members, func(i, j int) bool { return members[i].Address() < members[j].Address() })
	body := compat.RestResultOK(func(w *compat.JSON) {
		w.BeginArray()
		for _, m := range members {
			if blank || strings.HasPrefix(m.Address(), kw) {
				m.AppendJSON(w)
			}
		}
		w.EndArray()
	})
	return SendJSON(c, body)
}

// simpleNodes lists the addresses of the UP members in the iteration order
// of Nacos' ConcurrentHashSet (a ConcurrentHashMap).
func (h *coreHandlers) simpleNodes(c *fiber.Ctx) error {
	var addrs []string
	for _, m := range h.allMembers() {
		if m.State == compat.MemberUp {
			addrs = append(addrs, m.Address())
		}
	}
	sort.Strings(addrs)
	addrs = concurrentHashOrder(addrs)
	return SendJSON(c, compat.RestResultOK(func(w *compat.JSON) { w.StrList(addrs) }))
}

// concurrentHashOrder orders keys (inserted in the given order) as a
// java.util.concurrent.ConcurrentHashMap iterates them: its table starts at
// 16 and doubles as soon as the size reaches 3/4 of it (one entry earlier
// than HashMap); bins in ascending index, insertion order within a bin.
func concurrentHashOrder(keys []string) []string {
	n := 16
	for len(keys) >= n-n/4 {
		n *= 2
	}
	out := append([]string(nil), keys...)
	sort.SliceStable(out, func(i, j int) bool {
		return compat.JavaHashBucket(compat.JavaStringHash(out[i]), n) < compat.JavaHashBucket(compat.JavaStringHash(out[j]), n)
	})
	return out
}

func (h *coreHandlers) health(c *fiber.Ctx) error {
	return SendJSON(c, compat.RestResultString(h.cl.Self().State))
}

// reportSignature is what Spring prints for the report handler method in
// "Required request body is missing".
const reportSignature = "public com.alibaba.nacos.common.model.RestResult<java.lang.String> com.alibaba.nacos.core.controller.NacosClusterController.report(com.alibaba.nacos.core.cluster.Member)"

// reportedMember is the part of a reported Member JSON the handler checks.
type reportedMember struct {
	ip, address string
	port        int
}

var memberStates = map[string]bool{
	compat.MemberStarting: true, compat.MemberUp: true, compat.MemberSuspicious: true,
	compat.MemberDown: true, compat.MemberIsolation: true,
}

// parseReportedMember reads a @RequestBody Member the way Spring's Jackson
// does: exact property names, unknown ones ignored, port coerced from numbers
// and numeric strings, state an enum name. ok=false means a JSON null.
func parseReportedMember(body []byte) (m reportedMember, ok bool, err error) {
	m.port = -1
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return m, false, err
	}
	if raw == nil {
		return m, false, nil
	}
	str := func(k string) (string, error) {
		v, present := raw[k]
		if !present {
			return "", nil
		}
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return "", err
		}
		switch t := x.(type) {
		case nil:
			return "", nil
		case string:
			return t, nil
		case float64, bool:
			return strings.TrimSpace(string(v)), nil
		}
		return "", fmt.Errorf("cannot deserialize String from %s", v)
	}
	if m.ip, err = str("ip"); err != nil {
		return m, false, err
	}
	if v, present := raw["address"]; present {
		if string(bytes.TrimSpace(v)) == "null" {
			m.address = "" // setAddress(null): blank for check()
		} else if m.address, err = str("address"); err != nil {
			return m, false, err
		}
	}
	if v, present := raw["port"]; present {
		p, err := str("port")
		if err != nil {
			return m, false, err
		}
		switch {
		case string(bytes.TrimSpace(v)) == "null":
			m.port = 0
		case p == "":
			m.port = 0
		default:
			n, perr := strconv.ParseInt(p, 10, 32)
			if perr != nil {
				f, ferr := strconv.ParseFloat(p, 64)
				if ferr != nil || f >= 1<<31 || f < -(1<<31) {
					return m, false, fmt.Errorf("cannot deserialize value of type `int` from %s", v)
				}
				n = int64(f)
			}
			m.port = int(n)
		}
	}
	if _, present := raw["state"]; present {
		s, err := str("state")
		if err != nil {
			return m, false, err
		}
		if s != "" && !memberStates[s] {
			return m, false, fmt.Errorf("cannot deserialize value of type `com.alibaba.nacos.core.cluster.NodeState` from String %q: not one of the values accepted for Enum class: [STARTING, UP, SUSPICIOUS, DOWN, ISOLATION]", s)
		}
	}
	if v, present := raw["extendInfo"]; present {
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return m, false, err
		}
		if _, isMap := x.(map[string]any); !isMap && x != nil {
			return m, false, fmt.Errorf("cannot deserialize Map from %s", v)
		}
	}
	return m, true, nil
}

// isJSONContentType reports whether Spring's Jackson converter reads this
// content type (application/json, application/*+json).
func isJSONContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// report is POST /v1/core/cluster/report. For now it only answers: "true"
// for a known member address, "false" otherwise (nothing is updated).
func (h *coreHandlers) report(c *fiber.Ctx) error {
	body := c.Body()
	ct := string(c.Request().Header.ContentType())
	if ct == "" {
		if len(body) == 0 {
			return compat.ServerError("Required request body is missing: " + reportSignature)
		}
		ct = "application/octet-stream"
	}
	if !isJSONContentType(ct) {
		// Spring prints MediaType.toString: parameters without blanks.
		return compat.ServerError("Content type '" + strings.ReplaceAll(ct, "; ", ";") + "' not supported")
	}
	if len(body) == 0 {
		return compat.ServerError("Required request body is missing: " + reportSignature)
	}
	if msg, cause, bad := compat.SpringBodyError(string(body), "com.alibaba.nacos.core.cluster.Member", false); bad {
		return compat.ServerError(msg, cause)
	}
	m, ok, err := parseReportedMember(body)
	if err != nil {
		if errors.Is(err, io.EOF) { // only white space
			return compat.ServerError("JSON parse error: No content to map due to end-of-input")
		}
		// Jackson's own wording is not reproduced after the prefix.
		return compat.ServerError("JSON parse error: " + err.Error())
	}
	if !ok {
		return compat.ServerError("Required request body is missing: " + reportSignature)
	}
	// Member.check(): StringUtils.isNoneBlank(ip, address) && port != -1
	if strings.TrimSpace(m.ip) == "" || strings.TrimSpace(m.address) == "" || m.port == -1 {
		return SendJSON(c, compat.RestResultFailed(400, "Node information is illegal"))
	}
	known := false
	for _, mem := range h.allMembers() {
		if mem.Address() == m.address {
			known = true
			break
		}
	}
	return SendJSON(c, compat.RestResultString(strconv.FormatBool(known)))
}

func (h *coreHandlers) liveness(c *fiber.Ctx) error { return SendText(c, "OK") }

func (h *coreHandlers) readiness(c *fiber.Ctx) error {
	if err := h.cl.Ready(); err != nil {
		c.Set(fiber.HeaderContentType, ContentTypeText)
		return c.Status(fiber.StatusInternalServerError).SendString(err.Error())
	}
	return SendText(c, "OK")
}

// serverState is GET /v1/console/server/state; nacosd has no function mode,
// so function_mode is null.
func (h *coreHandlers) serverState(c *fiber.Ctx) error {
	mode := "cluster"
	if h.cl.Standalone() {
		mode = "standalone"
	}
	w := compat.NewJSON(80)
	w.BeginObject().
		Key("version").Str(NacosVersion).
		Key("standalone_mode").Str(mode).
		Key("function_mode").Null().
		EndObject()
	return SendJSON(c, w.Bytes())
}
