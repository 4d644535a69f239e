package httpapi

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/config"
)

// ConfigV2Routes are the config Open API v2 (ConfigControllerV2 and
// HistoryControllerV2 of 2.5.1): /v2/cs/config GET, POST, DELETE and
// /v2/cs/history, /list, /previous, /configs, answering Result JSON.
func ConfigV2Routes(d ConfigDeps) []Route {
	h := &configHandlers{s: d.Service, log: d.Logger}
	r, w := secConfigV2(auth.ActionRead), secConfigV2(auth.ActionWrite)
	return withHead([]Route{
		route(fiber.MethodGet, "/v2/cs/config", Read, r, v2Wrap(h.v2Get)),
		idempotentRoute(audited(route(fiber.MethodPost, "/v2/cs/config", CP, w, v2Wrap(h.v2Publish)), "config.publish", []string{"namespaceId", "group", "dataId", "tag"}, nil)),
		idempotentRoute(audited(route(fiber.MethodDelete, "/v2/cs/config", CP, w, v2Wrap(h.v2Delete)), "config.delete", []string{"namespaceId", "group", "dataId", "tag"}, nil)),
		route(fiber.MethodGet, "/v2/cs/history", Read, r, v2Wrap(h.v2History)),
		route(fiber.MethodGet, "/v2/cs/history/list", Read, r, v2Wrap(h.v2HistoryList)),
		route(fiber.MethodGet, "/v2/cs/history/previous", Read, r, v2Wrap(h.v2HistoryPrevious)),
		route(fiber.MethodGet, "/v2/cs/history/configs", Read, r, v2Wrap(h.v2HistoryConfigs)),
	}, v2NotSupported)
}

// v2NotSupported answers another method of a v2 path as 2.5.1 does: its
// global handler's Result with code 500 and Spring's message escaped.
func v2NotSupported(c *fiber.Ctx) error {
	w := compat.NewJSON(96)
	w.BeginObject().Key("code").Int(500).Key("message").Str("caused: Request method &#39;" + c.Method() + "&#39; not supported;").
		Key("data").Null().EndObject()
	c.Set(fiber.HeaderContentType, v2ContentTypeJSON)
	return c.Status(fiber.StatusInternalServerError).Send(w.Bytes())
}

// secConfigV2 is the config check of the v2 API: the namespace is
// namespaceId (or tenant).
func secConfigV2(action string) *Secured {
	return &Secured{action: action, parser: func(p Params) (string, error) {
		ns, ok := p.Raw("namespaceId")
		if !ok || compat.JavaIsBlank(ns) {
			ns, ok = p.Raw("tenant")
		}
		return configResourceOf(processNamespace(ns, ok), p), nil
	}}
}

// paramFilter is 2.5.1's ParamCheckerFilter for HTTP: a refused parameter
// is answered 400 with the checker's message as plain text, written
// straight to the response (no content type). ok false: answered.
func paramFilter(c *fiber.Ctx, infos []remote.ParamInfo) (ok bool, err error) {
	msg := remote.CheckParams(infos)
	if msg == "" {
		return true, nil
	}
	c.Response().Reset()
	noCache(c)
	c.Response().Header.SetNoDefaultContentType(true)
	return false, c.Status(fiber.StatusBadRequest).SendString(msg + "\r\n") // the filter's println
}

func configParamInfo(p Params) []remote.ParamInfo {
	ns, ok := p.Raw("namespaceId")
	if !ok {
		ns, _ = p.Raw("tenant")
	}
	dataID, _ := p.Raw("dataId")
	group, _ := p.Raw("group")
	return []remote.ParamInfo{{NamespaceID: ns, DataID: dataID, Group: group}}
}

// v2Required reads required @RequestParams (present, any value).
func v2Required(p Params, names ...string) ([]string, error) {
	out := make([]string, len(names))
	for i, n := range names {
		v, ok := p.Raw(n)
		if !ok {
			return nil, v2Missing(n, "String")
		}
		out[i] = v
	}
	return out, nil
}

// v2Namespace is NamespaceUtil.processNamespaceParameter after checkTenantV2.
func v2Namespace(p Params) (string, error) {
	ns, _ := p.Raw("namespaceId")
	if err := compat.CheckTenant(ns); err != nil {
		return "", v2Err(fiber.StatusBadRequest, v2ValidateError, compatBody(err))
	}
	return processNamespace(ns, true), nil
}

// compatBody is a compat error's message as a NacosApiException carries
// it (without the 1.x "caused: …;" wrapping).
func compatBody(err error) string {
	if ce, ok := err.(*compat.Error); ok {
		b := strings.TrimPrefix(ce.Body, "caused: ")
		return strings.TrimSuffix(b, ";")
	}
	return err.Error()
}

// v2Get is GET /v2/cs/config: the content in a Result, with the 1.x
// answer's headers.
func (h *configHandlers) v2Get(c *fiber.Ctx) error {
	p := ParamsOf(c)
	if ok, err := paramFilter(c, configParamInfo(p)); !ok {
		return err
	}
	v, err := v2Required(p, "dataId", "group")
	if err != nil {
		return err
	}
	tenant, err := v2Namespace(p)
	if err != nil {
		return err
	}
	tag, _ := p.Raw("tag")
	if err := compat.CheckConfigParams(v[0], v[1], "content", 0); err != nil {
		return v2Err(fiber.StatusBadRequest, v2ValidateError, compatBody(err))
	}
	if err := compat.CheckTag(tag); err != nil {
		return v2Err(fiber.StatusBadRequest, v2ValidateError, compatBody(err))
	}
	r := h.s.GetFor(v[0], v[1], tenant, tag, utils.UnsafeString(c.Request().Header.Peek("Vipserver-Tag")), func() string { return clientIP(c) })
	notFound := &V2Error{Status: fiber.StatusNotFound, Code: v2ResourceNotFound, Data: strp("config data not exist"), NoType: true, Newline: true}
	if !r.Found {
		return notFound
	}
	hd := &c.Response().Header
	hd.SetCanonical(hdrConfigType, utils.UnsafeBytes(r.Type))
	if !r.Served {
		return notFound
	}
	if r.Beta {
		c.Set("isBeta", "true")
	}
	hd.SetCanonical(hdrContentMD5, utils.UnsafeBytes(r.MD5))
	noCache(c)
	var db [httpDateLen]byte
	hd.SetCanonical(hdrLastModified, appendHTTPDate(db[:0], r.Modified))
	c.Set("Encrypted-Data-Key", "")
	w := compat.NewJSON(64 + len(r.Content))
	writeResult(w, 0, "success", v2Str(r.Content))
	c.Set(fiber.HeaderContentType, v2ContentTypeResult)
	return c.Send(w.Bytes())
}

// v2Publish is POST /v2/cs/config (ConfigForm).
func (h *configHandlers) v2Publish(c *fiber.Ctx) error {
	p := ParamsOf(c)
	if ok, err := paramFilter(c, configParamInfo(p)); !ok {
		return err
	}
	for _, n := range []string{"dataId", "group", "content"} { // ConfigForm.validate
		if v, _ := p.Raw(n); compat.JavaIsBlank(v) {
			return v2FormMissing(n, "String")
		}
	}
	dataID, _ := p.Raw("dataId")
	group, _ := p.Raw("group")
	content, _ := p.Raw("content")
	tenant, err := v2Namespace(p)
	if err != nil {
		return err
	}
	tag, _ := p.Raw("tag")
	if err := compat.CheckTag(tag); err != nil {
		return v2Err(fiber.StatusBadRequest, v2ValidateError, compatBody(err))
	}
	typ, _ := p.Raw("type")
	r := config.PublishRequest{DataID: dataID, Group: group, Tenant: tenant, Content: content, Tag: tag,
		BetaIps: strings.Clone(c.Get("betaIps")), AppName: opt(p, "appName"), SrcUser: opt(p, "srcUser"), SrcIP: clientIP(c),
		ConfigTags: opt(p, "configTags"), Desc: opt(p, "desc"), Use: opt(p, "use"), Effect: opt(p, "effect"),
		Schema: opt(p, "schema"), Type: compat.NormalizeConfigType(typ), CasMD5: strings.Clone(c.Get("casMd5"))}
	if r.SrcUser == nil {
		r.SrcUser = srcUser(p)
	}
	if err := h.s.CheckPublish(&r); err != nil {
		return v2Err(fiber.StatusBadRequest, v2ValidateError, compatBody(err))
	}
	if err := h.s.Publish(c.UserContext(), r); err != nil {
		return err
	}
	return v2OK(c, v2True)
}

// v2Delete is DELETE /v2/cs/config.
func (h *configHandlers) v2Delete(c *fiber.Ctx) error {
	p := ParamsOf(c)
	if ok, err := paramFilter(c, configParamInfo(p)); !ok {
		return err
	}
	v, err := v2Required(p, "dataId", "group")
	if err != nil {
		return err
	}
	tenant, err := v2Namespace(p)
	if err != nil {
		return err
	}
	tag, _ := p.Raw("tag")
	if err := compat.CheckConfigParams(v[0], v[1], "rm", 0); err != nil {
		return v2Err(fiber.StatusBadRequest, v2ValidateError, compatBody(err))
	}
	if err := compat.CheckTag(tag); err != nil {
		return v2Err(fiber.StatusBadRequest, v2ValidateError, compatBody(err))
	}
	if err := h.s.Delete(c.UserContext(), config.DeleteRequest{DataID: v[0], Group: v[1], Tenant: tenant, Tag: tag,
		SrcUser: srcUser(p), SrcIP: clientIP(c)}); err != nil {
		return err
	}
	return v2OK(c, v2True)
}

// v2Long reads a Long @RequestParam.
func v2Long(p Params, name string) (int64, error) {
	v, ok := p.Raw(name)
	if !ok {
		return 0, v2Missing(name, "Long")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, &V2Error{Status: fiber.StatusInternalServerError, Code: v2ServerError,
			Message: "Failed to convert value of type 'java.lang.String' to required type 'java.lang.Long'; nested exception is java.lang.NumberFormatException: For input string: \"" + v + "\""}
	}
	return n, nil
}

// v2Int reads an Integer @RequestParam with a default.
func v2Int(p Params, name string, def int) (int, error) {
	v, ok := p.Raw(name)
	if !ok || strings.TrimSpace(v) == "" {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, &V2Error{Status: fiber.StatusInternalServerError, Code: v2ServerError,
			Message: "Failed to convert value of type 'java.lang.String' to required type 'java.lang.Integer'; nested exception is java.lang.NumberFormatException: For input string: \"" + v + "\""}
	}
	return n, nil
}

// historyV2 writes a history row as 2.5.1's ConfigHistoryInfo.
func (h *configHandlers) historyV2(w *compat.JSON, r *config.History, full bool) {
	w.BeginObject()
	w.Key("id").Str(strconv.FormatInt(r.Nid, 10))
	w.Key("lastId").Int(-1)
	w.Key("dataId").Str(r.DataID)
	w.Key("group").Str(r.Group)
	w.Key("tenant").Str(r.Tenant)
	w.Key("appName").Str(r.AppName)
	if full {
		w.Key("md5").Str(r.MD5).Key("content").Str(r.Content)
	} else {
		w.Key("md5").Null().Key("content").Null()
	}
	w.Key("srcIp")
	if r.SrcIP == "" {
		w.Null()
	} else {
		w.Str(r.SrcIP)
	}
	w.Key("srcUser")
	if r.SrcUser == nil {
		w.Null()
	} else {
		w.Str(*r.SrcUser)
	}
	w.Key("opType").Str(compat.HistoryOpType(r.Op))
	w.Key("publishType").Str("formal")
	w.Key("grayName").Str("")
	typ := r.Type
	if typ == "" {
		typ = "text"
	}
	w.Key("extInfo").Str(`{"type":"` + typ + `"}`)
	w.Key("createdTime").Str(compat.JacksonDate(compat.HistoryCreatedTime(h.s.Location())))
	w.Key("lastModifiedTime").Str(compat.JacksonDate(msTime(r.Modified, h.s)))
	w.Key("encryptedDataKey")
	if full {
		w.Str("")
	} else {
		w.Null()
	}
	w.EndObject()
}

// v2HistoryList is GET /v2/cs/history/list.
func (h *configHandlers) v2HistoryList(c *fiber.Ctx) error {
	p := ParamsOf(c)
	v, err := v2Required(p, "dataId", "group")
	if err != nil {
		return err
	}
	ns, _ := p.Raw("namespaceId")
	tenant := processNamespace(ns, true)
	pageNo, err := v2Int(p, "pageNo", 1)
	if err != nil {
		return err
	}
	pageSize, err := v2Int(p, "pageSize", 100)
	if err != nil {
		return err
	}
	pageSize = min(500, pageSize)
	if pageNo <= 0 || pageSize <= 0 {
		return v2Err(fiber.StatusBadRequest, v2ValidateError, "pageNo and pageSize must be greater than zero")
	}
	total, rows := h.s.HistoryPage(v[0], v[1], tenant, pageNo, pageSize)
	return v2OK(c, func(w *compat.JSON) {
		w.BeginObject()
		w.Key("totalCount").Int(int64(total))
		w.Key("pageNumber").Int(int64(pageNo))
		w.Key("pagesAvailable").Int(int64(config.PagesAvailable(total, pageSize)))
		w.Key("pageItems").BeginArray()
		for _, r := range rows {
			h.historyV2(w, r, false)
		}
		w.EndArray()
		w.EndObject()
	})
}

// v2HistoryOne answers one history row after HistoryService's check that
// it is the config asked about.
func (h *configHandlers) v2HistoryOne(c *fiber.Ctx, p Params, r *config.History) error {
	if r == nil {
		return v2OK(c, nil)
	}
	v, _ := v2Required(p, "dataId", "group")
	ns, _ := p.Raw("namespaceId")
	if r.DataID != v[0] || r.Group != v[1] || r.Tenant != processNamespace(ns, true) {
		return v2Err(fiber.StatusForbidden, v2AccessDenied, "Please check dataId, group or namespaceId.")
	}
	return v2OK(c, func(w *compat.JSON) { h.historyV2(w, r, true) })
}

// v2History is GET /v2/cs/history?nid=.
func (h *configHandlers) v2History(c *fiber.Ctx) error {
	p := ParamsOf(c)
	if _, err := v2Required(p, "dataId", "group"); err != nil {
		return err
	}
	nid, err := v2Long(p, "nid")
	if err != nil {
		return err
	}
	return h.v2HistoryOne(c, p, h.s.HistoryByNid(nid))
}

// v2HistoryPrevious is GET /v2/cs/history/previous?id=.
func (h *configHandlers) v2HistoryPrevious(c *fiber.Ctx) error {
	p := ParamsOf(c)
	if _, err := v2Required(p, "dataId", "group"); err != nil {
		return err
	}
	id, err := v2Long(p, "id")
	if err != nil {
		return err
	}
	return h.v2HistoryOne(c, p, h.s.HistoryPrevious(id))
}

// v2HistoryConfigs is GET /v2/cs/history/configs?namespaceId=: the
// namespace's configs without their content (ConfigInfoWrapper).
func (h *configHandlers) v2HistoryConfigs(c *fiber.Ctx) error {
	p := ParamsOf(c)
	if ok, err := paramFilter(c, configParamInfo(p)); !ok {
		return err
	}
	if _, err := v2Required(p, "namespaceId"); err != nil {
		return err
	}
	tenant, err := v2Namespace(p)
	if err != nil {
		return err
	}
	_, rows := h.s.Search(config.SearchRequest{Tenant: tenant, PageNo: 1, PageSize: 1 << 30})
	return v2OK(c, func(w *compat.JSON) {
		w.BeginArray()
		for _, r := range rows {
			in := r.Info
			w.BeginObject()
			w.Key("id").Str("0")
			w.Key("dataId").Str(in.DataID)
			w.Key("group").Str(in.Group)
			w.Key("content").Null().Key("md5").Null().Key("encryptedDataKey").Null()
			w.Key("tenant").Str(in.Tenant)
			w.Key("appName").Str(in.AppName)
			typ := in.Type
			if typ == "" {
				typ = "text"
			}
			w.Key("type").Str(typ)
			w.Key("lastModified").Int(in.Modified)
			w.EndObject()
		}
		w.EndArray()
	})
}
