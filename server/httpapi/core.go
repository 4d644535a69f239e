package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/buildinfo"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/cluster"
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

// Membership is what the node-to-node membership endpoints need.
type Membership interface {
	// Report stores a member's report (its state becomes UP) and records
	// whether it is a nacosd node from the raft header; it returns whether
	// the reporter is a member, and this node's raft address and raft
	// leader to answer with.
	Report(m compat.ReportedMember, raftHeader string) (known bool, selfRaft, leader string)
	// Leave removes members (POST /v1/core/cluster/server/leave).
	Leave(addrs []string) error
	// UpAddresses is memberAddressInfos (GET /v1/core/cluster/simple/nodes).
	UpAddresses() []string
}

type coreHandlers struct {
	cl Cluster
	mb Membership
}

// MountCore registers the core routes on r (tests).
func MountCore(r fiber.Router, cl Cluster, mb Membership) { MustTable(CoreRoutes(cl, mb)).Mount(r) }

// CoreRoutes are the /v1/core/cluster and /v1/console health and state
// endpoints (console-auth-core-v1.md §4.2, §5). Other methods on these
// paths answer as Spring does through ConsoleExceptionHandler: 500
// "caused: Request method 'X' not supported;".
func CoreRoutes(cl Cluster, mb Membership) []Route {
	h := &coreHandlers{cl, mb}
	node := secNode
	var out []Route
	for _, rt := range []Route{
		route(fiber.MethodGet, "/v1/core/cluster/self", Read, nil, h.self),
		route(fiber.MethodGet, "/v1/core/cluster/nodes", Read, nil, h.nodes),
		route(fiber.MethodGet, "/v1/core/cluster/simple/nodes", Read, nil, h.simpleNodes),
		route(fiber.MethodGet, "/v1/core/cluster/health", Read, nil, h.health),
		route(fiber.MethodPost, "/v1/core/cluster/report", Local, node(), h.report),
		audited(route(fiber.MethodPost, "/v1/core/cluster/server/leave", Local, node(), h.leave), "member.leave", nil, nil),
		route(fiber.MethodPost, "/v1/core/cluster/switch/lookup", Local, node(), h.switchLookup),
		route(fiber.MethodGet, "/v1/console/health/liveness", Read, nil, h.liveness),
		route(fiber.MethodGet, "/v1/console/health/readiness", Read, nil, h.readiness),
		route(fiber.MethodGet, "/v1/console/server/state", Read, nil, h.serverState),
		audited(route(fiber.MethodPut, "/v1/core/ops/log", Local, node(), opsLog("200")), "log.level", []string{"logName", "logLevel"}, nil),
		route(fiber.MethodGet, "/v1/cmdb/ops/label", Read, nil, cmdbLabel),
	} {
		out = append(out, withHead([]Route{rt}, methodNotSupported)...)
	}
	// omitted (conformance/routes.txt: JRaft operations), but checked as
	// Java checks it
	return append(out, unserved(fiber.MethodPost, "/v1/core/ops/raft", Local, secFixed(auth.ActionWrite, "nacos/admin", false)))
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
	e := compat.ServerError("Request method '" + c.Method() + "' not supported")
	e.Exception = ExceptionMethodNotSupported
	return e
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

// simpleNodes lists the addresses of the members this node reached (self
// included; ServerMemberManager.memberAddressInfos) in the iteration order
// of Nacos' ConcurrentHashSet (a ConcurrentHashMap).
func (h *coreHandlers) simpleNodes(c *fiber.Ctx) error {
	addrs := h.mb.UpAddresses()
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

// isJSONContentType reports whether Spring's Jackson converter reads this
// content type (application/json, application/*+json).
func isJSONContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// report is POST /v1/core/cluster/report (NacosClusterController.report):
// a known member's report updates this node's view of it ("true"), an
// unknown address answers "false".
func (h *coreHandlers) report(c *fiber.Ctx) error {
	body := c.Request().Body()
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
	m, ok, err := compat.ParseReportedMember(body)
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
	if !m.Check() { // Member.check(): ip and address not blank, port not -1
		return SendJSON(c, compat.RestResultFailed(400, "Node information is illegal"))
	}
	known, raft, leader := h.mb.Report(m, string(c.Request().Header.Peek(cluster.HeaderRaft)))
	if raft != "" {
		c.Set(cluster.HeaderRaft, raft)
		if leader != "" {
			c.Set(cluster.HeaderRaftLeader, leader)
		}
	}
	return SendJSON(c, compat.RestResultString(strconv.FormatBool(known)))
}

// leave is POST /v1/core/cluster/server/leave: the JSON array of
// addresses leaves this node's list (cluster.conf is rewritten). Java then
// tells every other remaining member (notifyOtherMembers, default true);
// nacosd asks the operator to post it to each node, as the members read
// the same cluster.conf change anyway.
func (h *coreHandlers) leave(c *fiber.Ctx) error {
	var addrs []string
	if err := json.Unmarshal(c.Body(), &addrs); err != nil {
		return compat.ServerError("JSON parse error: " + err.Error())
	}
	if err := h.mb.Leave(addrs); err != nil {
		return SendJSON(c, compat.RestResultFailed(500, err.Error()))
	}
	return SendJSON(c, compat.RestResultString("ok"))
}

// switchLookup is POST /v1/core/cluster/switch/lookup: nacosd reads members
// from files only (cluster.conf, nacos.member.list, NACOS_SERVERS).
func (h *coreHandlers) switchLookup(c *fiber.Ctx) error {
	typ, err := ParamsOf(c).SpringRequired("type")
	if err != nil {
		return err
	}
	if typ != "file" {
		return SendJSON(c, compat.RestResultFailed(500, "nacosd reads cluster members from cluster.conf only; lookup type "+typ+" is not supported"))
	}
	return SendJSON(c, compat.RestResultOK(nil))
}

func (h *coreHandlers) liveness(c *fiber.Ctx) error { return SendText(c, "OK") }

func (h *coreHandlers) readiness(c *fiber.Ctx) error {
	if err := h.cl.Ready(); err != nil {
		c.Set(fiber.HeaderContentType, ContentTypeText)
		return c.Status(fiber.StatusInternalServerError).SendString(err.Error())
	}
	return SendText(c, "OK")
}

// BuildReporter is what a Cluster may also implement to show the running
// build in /v1/console/server/state.
type BuildReporter interface {
	Build() buildinfo.Info
}

// serverState is GET /v1/console/server/state; nacosd has no function mode,
// so function_mode is null. After Java's keys come nacosd's build (its
// version, VCS revision and revision time), beside the Nacos version
// clients read.
func (h *coreHandlers) serverState(c *fiber.Ctx) error {
	mode := "cluster"
	if h.cl.Standalone() {
		mode = "standalone"
	}
	w := compat.NewJSON(200)
	w.BeginObject().
		Key("version").Str(compat.NacosVersion).
		Key("standalone_mode").Str(mode).
		Key("function_mode").Null()
	if br, ok := h.cl.(BuildReporter); ok {
		b := br.Build()
		w.Key("nacosd_version").Str(b.Version).
			Key("nacosd_revision").Str(b.Revision).
			Key("nacosd_revision_time").Str(b.TimeText())
	}
	w.EndObject()
	return SendJSON(c, w.Bytes())
}

// ViewCheckRoutes is GET /v1/nacosd/views/check: the differences between
// the node's views of its raft state and the state itself (200 "ok", 500
// with one difference per line). Node-only with auth on; the fault
// checker asks every member after healing.
func ViewCheckRoutes(check func() []string) []Route {
	return []Route{route(fiber.MethodGet, "/v1/nacosd/views/check", Local, secNode(), func(c *fiber.Ctx) error {
		if diffs := check(); len(diffs) > 0 {
			c.Set(fiber.HeaderContentType, ContentTypeText)
			return c.Status(fiber.StatusInternalServerError).SendString(strings.Join(diffs, "\n"))
		}
		return SendText(c, "ok")
	})}
}
