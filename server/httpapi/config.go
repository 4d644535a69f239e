package httpapi

import (
	"errors"
	"log/slog"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/config"
)

// MountConfig registers the config API (/v1/cs/*, config-v1.md) and the
// console namespaces (/v1/console/namespaces) on r, the context-path group.
// A held long poll blocks its handler (fiber's app.Test); a served node
// uses ConfigRoutes with ConfigDeps.Server.
func MountConfig(r fiber.Router, s *config.Service, log *slog.Logger) {
	MustTable(ConfigRoutes(ConfigDeps{Service: s, Logger: log})).Mount(r)
}

// ConfigDeps are the collaborators of the config API.
type ConfigDeps struct {
	Service *config.Service
	Logger  *slog.Logger
	// Server, when set, is the fasthttp server of r's app: a held long
	// poll then leaves it until answered (held.go), costing no goroutine.
	// ConfigRoutes sets its KeepHijackedConns.
	Server *fasthttp.Server
}

// publishIdempotent: a publish (main, beta or tag) of the same content
// twice leaves one config; an import or a clone reports what it found
// already there, so a second run answers differently.
func publishIdempotent(r Route) Route {
	r.IdempotentOf = func(c *fiber.Ctx) bool {
		p := ParamsOf(c)
		return !param(p, "import", "true") && !param(p, "clone", "true")
	}
	return r
}

// ConfigRoutes are the config API (/v1/cs/*) and the console namespaces.
// Every /v1/cs response carries NacosWebFilter's content type (wrap); other
// methods of a path answer Spring's "not supported".
func ConfigRoutes(d ConfigDeps) []Route {
	s, log := d.Service, d.Logger
	h := &configHandlers{s: s, log: log}
	if d.Server != nil {
		h.held = newHeldPolls(d.Server, s)
	}
	cfgR, cfgW := func() *Secured { return secConfig(auth.ActionRead) }, func() *Secured { return secConfig(auth.ActionWrite) }
	w := h.wrap
	routes := withHead([]Route{
		route(fiber.MethodGet, "/v1/cs/configs", Read, withExtra(cfgR(), configReadExtra), w(h.getDispatch)),
		publishIdempotent(audited(route(fiber.MethodPost, "/v1/cs/configs", CP, withExtra(cfgW(), configWriteExtra), w(h.postDispatch)),
			"config.publish", append(auditConfig[:len(auditConfig):len(auditConfig)], "policy"), refinePublish)),
		idempotentRoute(audited(route(fiber.MethodDelete, "/v1/cs/configs", CP, withExtra(cfgW(), configDeleteExtra), w(h.deleteDispatch)),
			"config.delete", []string{"tenant", "group", "dataId", "tag", "ids"}, refineDelete)),
		route(fiber.MethodGet, "/v1/cs/configs/catalog", Read, cfgR(), w(h.catalog)),
		route(fiber.MethodPost, "/v1/cs/configs/listener", Read, withExtra(cfgR(), listenerExtra), w(h.listen)),
		route(fiber.MethodGet, "/v1/cs/configs/listener", Read, cfgR(), w(h.listeners)),
		route(fiber.MethodGet, "/v1/cs/history", Read, withExtra(cfgR(), historyExtra), w(h.historyDispatch)),
		route(fiber.MethodGet, "/v1/cs/history/previous", Read, withExtra(cfgR(), historyPreviousExtra), w(h.historyPrevious)),
		// what a client IP listens to: every key it lists is checked (issue 26 item 8)
		route(fiber.MethodGet, "/v1/cs/listener", Read, withExtra(cfgR(), listenerByIPExtra), w(h.listenerByIP)),
		route(fiber.MethodGet, "/v1/cs/communication/dataChange", Local, secNode(), w(h.dataChange)),
		route(fiber.MethodGet, "/v1/cs/communication/configWatchers", Local, secNode(), w(h.configWatchers)),
		route(fiber.MethodGet, "/v1/cs/communication/watcherConfigs", Local, secNode(), w(h.watcherConfigs)),
		route(fiber.MethodPost, "/v1/cs/ops/localCache", Local, secNode(), w(h.text200)),
		audited(route(fiber.MethodPut, "/v1/cs/ops/log", Local, secNode(), w(opsLog("200"))), "log.level", []string{"logName", "logLevel"}, nil),
		route(fiber.MethodGet, "/v1/cs/health", Read, nil, w(h.health)),
		route(fiber.MethodGet, "/v1/cs/ops/derby", Read, secFixed(auth.ActionRead, "nacos/admin", false), w(h.derby)),
	}, w(methodNotSupported))
	// omitted (conformance/routes.txt), but checked as Java checks it
	routes = append(routes, unserved(fiber.MethodPost, "/v1/cs/ops/data/removal", Local, secFixed(auth.ActionWrite, "nacos/admin", false)))
	return append(routes, namespaceRoutes(s, log)...)
}

type configHandlers struct {
	s    *config.Service
	log  *slog.Logger
	held *heldPolls // nil: a held poll blocks its handler
}

// wrap gives every /v1/cs response NacosWebFilter's
// application/json;charset=UTF-8 (config-v1.md §0); errors and String
// results go through Spring's StringHttpMessageConverter and answer
// text/plain;charset=UTF-8 (seen on the reference).
func (h *configHandlers) wrap(fn fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, compat.ConfigContentTypeJSON)
		err := fn(c)
		if err == nil {
			return nil
		}
		var ce *compat.Error
		if errors.As(err, &ce) {
			return ce
		}
		if errors.Is(err, raftstore.ErrNotLeader) || errors.Is(err, raftstore.ErrLeadershipLost) {
			return err // ForwardToLeader sends it to the raft leader, or answers Java's no-leader error
		}
		h.log.Error("config request failed", "method", c.Method(), "path", c.Path(), "err", err)
		return compat.ConfigServerError(err.Error())
	}
}

// clientIP is RequestUtil.getRemoteIp (config-v1.md §0.2). The result is a
// copy: it outlives the request in long-poll holder tables.
func clientIP(c *fiber.Ctx) string {
	if xff := c.Get("X-Forwarded-For"); !compat.JavaIsBlank(xff) {
		first, _, _ := strings.Cut(xff, ",")
		return strings.Clone(compat.JavaTrim(first))
	}
	if xr := c.Get("X-Real-IP"); !compat.JavaIsBlank(xr) {
		return strings.Clone(xr)
	}
	return c.Context().RemoteIP().String()
}

// opt is an optional Spring @RequestParam String without default: nil when
// absent.
func opt(p Params, name string) *string {
	v, ok := p.Raw(name)
	if !ok {
		return nil
	}
	return &v
}

// srcUser is RequestUtil.getSrcUserName without a session: the username
// parameter.
func srcUser(p Params) *string { return opt(p, "username") }

func sendCfgJSON(c *fiber.Ctx, body []byte) error {
	c.Set(fiber.HeaderContentType, compat.ConfigContentTypeJSON)
	return c.Send(body)
}

func param(p Params, name, value string) bool {
	v, ok := p.Peek(name)
	return ok && v == value
}

func (h *configHandlers) getDispatch(c *fiber.Ctx) error {
	p := ParamsOf(c)
	switch {
	case param(p, "show", "all"):
		return h.detail(c, p)
	case param(p, "search", "accurate"):
		return h.search(c, p, false)
	case param(p, "search", "blur"):
		return h.search(c, p, true)
	case param(p, "beta", "true"):
		return h.queryBeta(c, p)
	case param(p, "export", "true"):
		return h.export(c, p, false)
	case param(p, "exportV2", "true"):
		return h.export(c, p, true)
	}
	return h.get(c, p)
}

func (h *configHandlers) postDispatch(c *fiber.Ctx) error {
	p := ParamsOf(c)
	switch {
	case param(p, "import", "true"):
		return h.importConfigs(c, p)
	case param(p, "clone", "true"):
		return h.clone(c, p)
	}
	return h.publish(c, p)
}

func (h *configHandlers) deleteDispatch(c *fiber.Ctx) error {
	p := ParamsOf(c)
	switch {
	case param(p, "delType", "ids"):
		return h.deleteIDs(c, p)
	case param(p, "beta", "true"):
		return h.stopBeta(c, p)
	}
	return h.delete(c, p)
}

// required reads required @RequestParam Strings in order.
func required(p Params, names ...string) ([]string, error) {
	out := make([]string, len(names))
	for i, n := range names {
		v, err := p.SpringRequired(n)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// get is GET /v1/cs/configs (config-v1.md §3.1), the config center's
// hottest request: parameters are read in place (only looked up), the
// client IP is read only when a beta variant needs it, and the headers
// are written without building strings.
func (h *configHandlers) get(c *fiber.Ctx, p Params) error {
	dataID, ok := p.Peek("dataId")
	if !ok {
		return compat.MissingRequestParam("dataId", "String")
	}
	group, ok := p.Peek("group")
	if !ok {
		return compat.MissingRequestParam("group", "String")
	}
	tenant, _ := p.Peek("tenant")
	tag, _ := p.Peek("tag")
	if err := compat.CheckTenant(tenant); err != nil {
		return err
	}
	tenant = compat.ProcessNamespace(tenant)
	if err := compat.CheckConfigParams(dataID, group, "content", 0); err != nil {
		return err
	}
	if err := compat.CheckTag(tag); err != nil {
		return err
	}
	r := h.s.GetFor(dataID, group, tenant, tag, utils.UnsafeString(c.Request().Header.Peek("Vipserver-Tag")), func() string { return clientIP(c) })
	if !r.Found {
		return c.Status(fiber.StatusNotFound).SendString(compat.ConfigNotExist)
	}
	hd := &c.Response().Header
	hd.SetCanonical(hdrConfigType, utils.UnsafeBytes(r.Type))
	hd.SetContentType(compat.ConfigContentType(r.Type))
	if !r.Served {
		return c.Status(fiber.StatusNotFound).SendString(compat.ConfigNotExist)
	}
	if r.Beta {
		c.Set("isBeta", "true")
	}
	if r.AutoTag != "" {
		c.Set("Vipserver-Tag", compat.JavaURLEncode(r.AutoTag))
	}
	hd.SetCanonical(hdrContentMD5, utils.UnsafeBytes(r.MD5))
	noCache(c)
	var db [httpDateLen]byte
	hd.SetCanonical(hdrLastModified, appendHTTPDate(db[:0], r.Modified))
	return c.SendString(r.Content)
}

// publish is POST /v1/cs/configs (config-v1.md §3.2).
func (h *configHandlers) publish(c *fiber.Ctx, p Params) error {
	v, err := required(p, "dataId", "group")
	if err != nil {
		return err
	}
	tenant := p.Spring("tenant", "")
	content, err := p.SpringRequired("content")
	if err != nil {
		return err
	}
	tag, _ := p.Raw("tag")
	typ, _ := p.Raw("type")
	r := config.PublishRequest{DataID: v[0], Group: v[1], Tenant: tenant, Content: content, Tag: tag,
		BetaIps: c.Get("betaIps"), AppName: opt(p, "appName"), SrcUser: srcUser(p), SrcIP: clientIP(c),
		ConfigTags: opt(p, "config_tags"), Desc: opt(p, "desc"), Use: opt(p, "use"), Effect: opt(p, "effect"),
		Schema: opt(p, "schema"), Type: compat.NormalizeConfigType(typ)}
	r.BetaIps = strings.Clone(r.BetaIps)
	if err := h.s.CheckPublish(&r); err != nil {
		return err
	}
	if err := h.s.Publish(c.UserContext(), r); err != nil {
		return err
	}
	return sendCfgJSON(c, []byte("true"))
}

// delete is DELETE /v1/cs/configs (config-v1.md §3.3).
func (h *configHandlers) delete(c *fiber.Ctx, p Params) error {
	v, err := required(p, "dataId", "group")
	if err != nil {
		return err
	}
	tenant := p.Spring("tenant", "")
	tag, _ := p.Raw("tag")
	if err := compat.CheckTenant(tenant); err != nil {
		return err
	}
	if err := compat.CheckConfigParams(v[0], v[1], "rm", 0); err != nil {
		return err
	}
	if err := compat.CheckTag(tag); err != nil {
		return err
	}
	if err := h.s.Delete(c.UserContext(), config.DeleteRequest{DataID: v[0], Group: v[1], Tenant: tenant, Tag: tag,
		SrcUser: srcUser(p), SrcIP: clientIP(c)}); err != nil {
		return err
	}
	return sendCfgJSON(c, []byte("true"))
}

// longList reads a List<Long> @RequestParam as Spring binds it: one value
// is comma-split (empty elements dropped, each trimmed) and a bad element
// fails the whole value ('java.lang.String', the NumberFormatException
// naming the trimmed value); several values are the elements themselves
// ('java.lang.String[]', naming the first bad one). present is false when
// absent.
func longList(c *fiber.Ctx, name string) (ids []int64, present bool, err error) {
	var raw [][]byte
	raw = append(raw, c.Request().URI().QueryArgs().PeekMulti(name)...)
	if !c.Request().Header.IsGet() {
		raw = append(raw, c.Request().PostArgs().PeekMulti(name)...)
	}
	if len(raw) == 0 {
		return nil, false, nil
	}
	bad := func(typ, input string) error {
		return compat.ConfigServerError(`Failed to convert value of type '`+typ+`' to required type 'java.util.List'; nested exception is java.lang.NumberFormatException: For input string: "`+input+`"`,
			`For input string: "`+input+`"`)
	}
	if len(raw) == 1 {
		for _, f := range strings.Split(string(raw[0]), ",") {
			f = compat.JavaTrim(f)
			if f == "" {
				continue
			}
			n, perr := strconv.ParseInt(f, 10, 64)
			if perr != nil {
				return nil, true, bad("java.lang.String", compat.JavaTrim(string(raw[0])))
			}
			ids = append(ids, n)
		}
		return ids, true, nil
	}
	for _, r := range raw {
		f := compat.JavaTrim(string(r))
		if f == "" {
			continue
		}
		n, perr := strconv.ParseInt(f, 10, 64)
		if perr != nil {
			return nil, true, bad("java.lang.String[]", f)
		}
		ids = append(ids, n)
	}
	return ids, true, nil
}

// deleteIDs is DELETE ?delType=ids (config-v1.md §3.4).
func (h *configHandlers) deleteIDs(c *fiber.Ctx, p Params) error {
	ids, present, err := longList(c, "ids")
	if err != nil {
		return err
	}
	if !present {
		return compat.ConfigMissingParam("ids", "List")
	}
	if err := h.s.DeleteByIDs(c.UserContext(), ids, clientIP(c)); err != nil {
		return err
	}
	return sendCfgJSON(c, compat.RestResultOK(func(w *compat.JSON) { w.Bool(true) }))
}

func strp(s string) *string { return &s }

func emptyToNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// detail is GET ?show=all (config-v1.md §3.5).
func (h *configHandlers) detail(c *fiber.Ctx, p Params) error {
	v, err := required(p, "dataId", "group")
	if err != nil {
		return err
	}
	tenant := p.Spring("tenant", "")
	if err := compat.CheckTenant(tenant); err != nil {
		return err
	}
	if err := compat.CheckConfigParams(v[0], v[1], "content", 0); err != nil {
		return err
	}
	in := h.s.Info(v[0], v[1], tenant)
	if in == nil {
		return emptyOK(c)
	}
	a := compat.ConfigAllInfo{ConfigInfo: infoJSON(in, true, true),
		CreateTime: in.Modified, ModifyTime: in.Modified, CreateUser: in.SrcUser, CreateIP: emptyToNil(in.SrcIP),
		Desc: in.Desc, Use: in.Use, Effect: in.Effect, Schema: in.Schema, ConfigTags: in.TagsJoined()}
	w := compat.NewJSON(256 + len(in.Content))
	a.AppendJSON(w)
	return sendCfgJSON(c, w.Bytes())
}

func infoJSON(in *config.Info, md5, typ bool) compat.ConfigInfo {
	ci := compat.ConfigInfo{ID: in.ID, DataID: in.DataID, Group: in.Group, Content: strp(in.Content),
		Tenant: strp(in.Tenant), AppName: strp(in.AppName)}
	if md5 {
		ci.MD5 = strp(in.MD5)
	}
	if typ {
		ci.Type = strp(in.Type)
	}
	return ci
}

// catalog is GET /v1/cs/configs/catalog (config-v1.md §3.6).
func (h *configHandlers) catalog(c *fiber.Ctx) error {
	p := ParamsOf(c)
	v, err := required(p, "dataId", "group")
	if err != nil {
		return err
	}
	in := h.s.Info(v[0], v[1], p.Spring("tenant", ""))
	if in == nil {
		return sendCfgJSON(c, compat.RestResultOK(nil))
	}
	a := compat.ConfigAdvanceInfo{CreateTime: in.Modified, ModifyTime: in.Modified, CreateUser: in.SrcUser,
		CreateIP: emptyToNil(in.SrcIP), Desc: in.Desc, Use: in.Use, Effect: in.Effect, Type: strp(in.Type),
		Schema: in.Schema, ConfigTags: in.TagsJoined()}
	return sendCfgJSON(c, compat.RestResultOK(a.AppendJSON))
}

// springIntRequired is a required int @RequestParam.
func springIntRequired(p Params, name string) (int, error) {
	v, ok := p.Raw(name)
	if !ok {
		return 0, compat.ConfigMissingParam(name, "int")
	}
	if strings.TrimSpace(v) == "" { // Spring 5.3: converted to null
		return 0, compat.ConfigServerError("Required request parameter '" + name + "' for method parameter type int is present but converted to null")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return 0, compat.ConfigParamTypeMismatch("int", v)
	}
	return int(n), nil
}

// springIntOptional is an optional Integer @RequestParam (def when absent
// or empty).
func springIntOptional(p Params, name string, def int) (int, error) {
	v, ok := p.Raw(name)
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return 0, compat.ConfigParamTypeMismatch("java.lang.Integer", v)
	}
	return int(n), nil
}

// search is GET ?search=accurate|blur (config-v1.md §3.7).
func (h *configHandlers) search(c *fiber.Ctx, p Params, blur bool) error {
	v, err := required(p, "dataId", "group")
	if err != nil {
		return err
	}
	appName, _ := p.Raw("appName")
	tenant := p.Spring("tenant", "")
	tags, _ := p.Raw("config_tags")
	pageNo, err := springIntRequired(p, "pageNo")
	if err != nil {
		return err
	}
	pageSize, err := springIntRequired(p, "pageSize")
	if err != nil {
		return err
	}
	if pageNo <= 0 || pageSize <= 0 {
		return compat.ConfigServerError("serialize page error, dataId="+v[0]+", group="+v[1], "pageNo and pageSize must be greater than zero")
	}
	total, rows := h.s.Search(config.SearchRequest{Blur: blur, DataID: v[0], Group: v[1], AppName: appName, Tenant: tenant,
		ConfigTags: tags, PageNo: pageNo, PageSize: pageSize})
	w := compat.NewJSON(256)
	compat.AppendPage(w, total, pageNo, config.PagesAvailable(total, pageSize), len(rows), func(w *compat.JSON, i int) {
		ci := infoJSON(rows[i].Info, false, rows[i].WithType)
		ci.AppendJSON(w)
	})
	return sendCfgJSON(c, w.Bytes())
}

// queryBeta is GET ?beta=true (config-v1.md §3.8).
func (h *configHandlers) queryBeta(c *fiber.Ctx, p Params) error {
	v, err := required(p, "dataId", "group")
	if err != nil {
		return err
	}
	msg := "stop beta ok"
	b := h.s.BetaInfo(v[0], v[1], p.Spring("tenant", ""))
	if b == nil {
		return sendCfgJSON(c, compat.RestResultJSON(200, &msg, nil))
	}
	bi := compat.ConfigInfo4Beta{ConfigInfo: compat.ConfigInfo{ID: b.ID, DataID: b.DataID, Group: b.Group,
		Content: strp(b.Content), Tenant: strp(b.Tenant), AppName: strp(b.AppName)}, BetaIps: strp(b.BetaIps)}
	return sendCfgJSON(c, compat.RestResultJSON(200, &msg, bi.AppendJSON))
}

// stopBeta is DELETE ?beta=true.
func (h *configHandlers) stopBeta(c *fiber.Ctx, p Params) error {
	v, err := required(p, "dataId", "group")
	if err != nil {
		return err
	}
	if err := h.s.StopBeta(c.UserContext(), v[0], v[1], p.Spring("tenant", "")); err != nil {
		h.log.Error("stop beta failed", "err", err)
		msg := "remove beta data error"
		return sendCfgJSON(c, compat.RestResultJSON(500, &msg, func(w *compat.JSON) { w.Bool(false) }))
	}
	msg := "stop beta ok"
	return sendCfgJSON(c, compat.RestResultJSON(200, &msg, func(w *compat.JSON) { w.Bool(true) }))
}

// dataChange is the inter-node notify; with raft every node's cache follows
// the log, so it only acknowledges.
// dataChange is GET /v1/cs/communication/dataChange, the notification a
// Java node sends its peers after a write (dataId and group are required
// @RequestParams). nacosd nodes share configs through raft, so there is
// nothing to re-read: the answer is Java's true.
func (h *configHandlers) dataChange(c *fiber.Ctx) error {
	p := ParamsOf(c)
	if _, err := p.SpringRequired("dataId"); err != nil {
		return err
	}
	if _, err := p.SpringRequired("group"); err != nil {
		return err
	}
	if lm := c.Get("lastModified"); lm != "" { // Long.parseLong of the header
		if _, err := strconv.ParseInt(lm, 10, 64); err != nil {
			return compat.IllegalArgument(`For input string: "` + lm + `"`)
		}
	}
	return sendCfgJSON(c, []byte("true"))
}

// String results go through StringHttpMessageConverter: text/plain.
func (h *configHandlers) text200(c *fiber.Ctx) error { return SendText(c, "200") }

func (h *configHandlers) health(c *fiber.Ctx) error { return SendText(c, "UP") }

// derby is GET /v1/cs/ops/derby: nacosd has no Derby, so it answers as a
// Java server on external storage does (config-v1.md §3.16).
func (h *configHandlers) derby(c *fiber.Ctx) error {
	if _, err := ParamsOf(c).SpringRequired("sql"); err != nil {
		return err
	}
	return sendCfgJSON(c, compat.RestResultFailed(500, "The current storage mode is not Derby"))
}

// status writes GroupkeyListenserStatus (or SampleResult without
// collectStatus) with keys in HashMap order.
func statusJSON(m map[string]string, collect bool) []byte {
	keys := compat.JavaHashMapKeys(m)
	if collect {
		return compat.ListenerStatus(keys, m)
	}
	w := compat.NewJSON(64)
	w.BeginObject().Key("lisentersGroupkeyStatus").StrMap(keys, m, false).EndObject()
	return w.Bytes()
}

// listeners is GET /v1/cs/configs/listener (config-v1.md §3.12).
func (h *configHandlers) listeners(c *fiber.Ctx) error {
	p := ParamsOf(c)
	v, err := required(p, "dataId", "group")
	if err != nil {
		return err
	}
	group := v[1]
	if compat.JavaIsBlank(group) {
		group = compat.ConfigDefaultGroup
	}
	tenant, _ := p.Raw("tenant")
	if _, err := springIntOptional(p, "sampleTime", 1); err != nil {
		return err
	}
	return sendCfgJSON(c, statusJSON(h.s.Watchers(compat.GroupKey(v[0], group, tenant)), true))
}

func (h *configHandlers) configWatchers(c *fiber.Ctx) error {
	p := ParamsOf(c)
	v, err := required(p, "dataId", "group")
	if err != nil {
		return err
	}
	group := v[1]
	if compat.JavaIsBlank(group) {
		group = compat.ConfigDefaultGroup
	}
	tenant, _ := p.Raw("tenant")
	return sendCfgJSON(c, statusJSON(h.s.Watchers(compat.GroupKey(v[0], group, tenant)), false))
}

func (h *configHandlers) watcherConfigs(c *fiber.Ctx) error {
	ip, err := ParamsOf(c).SpringRequired("ip")
	if err != nil {
		return err
	}
	return sendCfgJSON(c, statusJSON(h.s.WatchedBy(ip), false))
}

// listenerByIP is GET /v1/cs/listener (config-v1.md §3.13).
func (h *configHandlers) listenerByIP(c *fiber.Ctx) error {
	p := ParamsOf(c)
	ip, err := p.SpringRequired("ip")
	if err != nil {
		return err
	}
	return sendCfgJSON(c, statusJSON(watchedListed(h.s.WatchedBy(ip), p), true))
}

// watchedListed keeps of m (group key → MD5 of what ip listens to) the keys
// GET /v1/cs/listener lists: with a tenant those containing it (Java's
// key.contains), else with all=true every key, else public's.
func watchedListed(m map[string]string, p Params) map[string]string {
	all := ParseBoolean(p.Spring("all", "false"))
	tenant, _ := p.Raw("tenant")
	for k := range m {
		_, _, t, perr := compat.ParseGroupKey(k)
		switch {
		case perr != nil:
		case !compat.JavaIsBlank(tenant):
			if !strings.Contains(k, tenant) {
				delete(m, k)
			}
		case !all:
			if t != "" {
				delete(m, k)
			}
		}
	}
	return m
}

// listen is POST /v1/cs/configs/listener, the long poll (config-v1.md §4).
func (h *configHandlers) listen(c *fiber.Ctx) error {
	p := ParamsOf(c)
	probe, _ := p.Peek("Listening-Configs") // read in place; copied below before it is held
	if compat.JavaIsBlank(probe) {
		return compat.ErrInvalidProbe
	}
	decoded, err := compat.JavaURLDecode(probe)
	if err != nil {
		return compat.ConfigIllegalArgument(err.Error())
	}
	entries, err := compat.ParseListeningConfigs(decoded)
	if err != nil {
		return err
	}
	tag := c.Get("Vipserver-Tag")
	timeoutHdr := c.Request().Header.Peek("Long-Pulling-Timeout")
	if timeoutHdr == nil {
		return h.shortPoll(c, entries, clientIP(c), tag)
	}
	timeout, err := strconv.ParseInt(string(timeoutHdr), 10, 64)
	if err != nil {
		return compat.ConfigNumberFormat(string(timeoutHdr))
	}
	noHangup := compat.JavaParseBoolean(c.Get("Long-Pulling-Timeout-No-Hangup"))
	changed, answered := h.s.CheckListen(entries, func() string { return clientIP(c) }, tag, noHangup)
	if !answered {
		// held: the entries must not alias the request any more
		if entries, err = compat.ParseListeningConfigs(strings.Clone(decoded)); err != nil {
			return err
		}
		poll := h.s.Listen(config.ListenRequest{Entries: entries, IP: clientIP(c), Tag: strings.Clone(tag),
			AppName: strings.Clone(c.Get("Client-AppName")), Timeout: timeout, NoHangup: noHangup})
		if h.held != nil {
			select {
			case <-poll.Done(): // answered already: answer here
			default:
				if h.held.hold(c, poll) {
					return nil // answered by held.go once poll is done
				}
			}
		}
		<-poll.Done()
		changed = poll.Result()
	}
	if len(changed) == 0 {
		return emptyOK(c)
	}
	noCache(c)
	return c.SendString(compat.EncodeChangedKeys(changed))
}

// shortPoll answers at once (no Long-Pulling-Timeout header, §4.4).
func (h *configHandlers) shortPoll(c *fiber.Ctx, entries []compat.ListenEntry, ip, tag string) error {
	changed := h.s.Changed(entries, ip, tag)
	noCache(c)
	ver := c.Get("Client-Version")
	if ver == "" {
		ver = "2.0.0"
	}
	if compat.VersionNumber(ver) < 204 {
		c.Set("Probe-Modify-Response", compat.ProbeModifyResponse(changed))
		enc := compat.EncodeChangedKeys(changed)
		c.Set("Probe-Modify-Response-New", strings.TrimSuffix(enc, "\n"))
	}
	return emptyOK(c)
}

// emptyOK answers 200 with an empty body (fiber's SendStatus would write
// "OK").
func emptyOK(c *fiber.Ctx) error {
	c.Status(fiber.StatusOK)
	c.Response().ResetBody()
	return nil
}
