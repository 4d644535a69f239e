package grpcapi

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/server/config"
)

// ConfigService is what the config handlers need of server/config.
type ConfigService interface {
	// GetFor selects the variant a client reads (beta for its IP, else the
	// tag or auto tag variant, else the main config).
	GetFor(dataID, group, tenant, tag, autoTag string, ip func() string) config.GetResult
	// MD5 is the MD5 a client with this IP and tag is served.
	MD5(groupKey, ip, tag string) string
	Publish(ctx context.Context, r config.PublishRequest) error
	Delete(ctx context.Context, r config.DeleteRequest) error
	StopBeta(ctx context.Context, dataID, group, tenant string) error
}

// ConfigDeps are the collaborators of the config handlers.
type ConfigDeps struct {
	Service ConfigService
	// MaxContent is the content limit (maxContent, UTF-16 units).
	MaxContent int
}

// Messages of the config handlers (2.5.1).
const (
	msgConfigNotFound = "config data not exist"
	msgCasFail        = "Cas publish fail, server md5 may have changed."
	msgCasGrayFail    = "Cas publish gray config fail, server md5 may have changed."
	// msgNullKey is the NullPointerException GroupKey2.getKey throws for a
	// request without dataId or group.
	msgNullKey = `Cannot invoke "String.length()" because "str" is null`
	tagHeader  = "Vipserver-Tag"
)

// MountConfig adds the config routes.
func MountConfig(s *Server, d ConfigDeps) *ConfigNotifier {
	h := &configHandlers{d: d, s: s}
	secured := func(action string) *Secured { return &Secured{Action: action, Resource: configResource} }
	s.Handle(&Route{Type: remote.TypeConfigQueryRequest, Response: func() remote.Responder { return &remote.ConfigQueryResponse{} },
		Secured: secured("r"), Params: configParams, Handle: h.query})
	s.Handle(&Route{Type: remote.TypeConfigPublishRequest, Response: plainResp(remote.TypeConfigPublishResponse),
		Secured: secured("w"), Params: configParams, Handle: h.publish,
		Refuse: func(err error) remote.Responder {
			return remote.NewPlain(remote.TypeConfigPublishResponse, remote.Fail(remote.CodeFail, writeFailure(err)))
		}})
	s.Handle(&Route{Type: remote.TypeConfigRemoveRequest, Response: plainResp(remote.TypeConfigRemoveResponse),
		Secured: secured("w"), Params: configParams, Handle: h.remove,
		Refuse: func(err error) remote.Responder {
			return remote.NewPlain(remote.TypeConfigRemoveResponse, remote.Response{ResultCode: remote.CodeFail, Message: writeFailure(err), HasMessage: true})
		}})
	n := newConfigNotifier(s, d.Service)
	h.n = n
	s.Handle(&Route{Type: remote.TypeConfigBatchListenRequest, Response: func() remote.Responder { return &remote.ConfigChangeBatchListenResponse{} },
		Secured: secured("r"), Params: listenParams, Handle: h.listen})
	return n
}

func plainResp(typ string) func() remote.Responder {
	return func() remote.Responder { return remote.NewPlain(typ, remote.OK()) }
}

type configHandlers struct {
	d ConfigDeps
	s *Server
	n *ConfigNotifier
}

// configParams is ConfigRequestParamExtractor.
func configParams(r remote.Requester) []remote.ParamInfo {
	k := configKeyOf(r)
	return []remote.ParamInfo{{NamespaceID: k.Tenant, DataID: k.DataID, Group: k.Group}}
}

// listenParams is ConfigBatchListenRequestParamExtractor.
func listenParams(r remote.Requester) []remote.ParamInfo {
	req := r.(*remote.ConfigBatchListenRequest)
	out := make([]remote.ParamInfo, 0, len(req.Contexts))
	for _, c := range req.Contexts {
		out = append(out, remote.ParamInfo{NamespaceID: c.Tenant, DataID: c.DataID, Group: c.Group})
	}
	return out
}

func configKeyOf(r remote.Requester) remote.ConfigKey {
	switch req := r.(type) {
	case *remote.ConfigQueryRequest:
		return req.ConfigKey
	case *remote.ConfigPublishRequest:
		return req.ConfigKey
	case *remote.ConfigRemoveRequest:
		return req.ConfigKey
	case *remote.ConfigBatchListenRequest:
		k := remote.ConfigKey{}
		if len(req.Contexts) > 0 {
			k.Tenant = req.Contexts[0].Tenant
		}
		return k
	}
	return remote.ConfigKey{}
}

// configResource is ConfigGrpcResourceParser joined as the nacos auth
// plugin joins it: "[ns]:group:config/dataId", "*" for a blank group or
// dataId, no namespace for public.
func configResource(r remote.Requester) string {
	k := configKeyOf(r)
	ns := k.Tenant
	if compat.JavaIsBlank(ns) || ns == "public" {
		ns = ""
	}
	group := k.Group
	if compat.JavaIsBlank(group) {
		group = "*"
	}
	name := k.DataID
	if compat.JavaIsBlank(name) {
		name = "*"
	}
	return ns + ":" + group + ":config/" + name
}

// autoTag is the tag a client's connection labels name for gray rules.
func autoTag(c *Call) string { return c.Conn.AppLabel(tagHeader) }

// query is ConfigQueryRequestHandler.
func (h *configHandlers) query(_ context.Context, c *Call) (remote.Responder, error) {
	req := c.Req.(*remote.ConfigQueryRequest)
	r := &remote.ConfigQueryResponse{Response: remote.OK()}
	if !req.HasDataID || !req.HasGroup {
		r.Response = remote.Fail(remote.CodeFail, msgNullKey)
		return r, nil
	}
	tenant := compat.ProcessNamespace(req.Tenant)
	auto := ""
	if compat.JavaIsBlank(req.Tag) {
		auto = autoTag(c)
	}
	got := h.d.Service.GetFor(req.DataID, req.Group, tenant, req.Tag, auto, c.ClientIP)
	switch {
	case !got.Found:
		r.Response = remote.Fail(remote.ErrInvalidServerStatus, msgConfigNotFound) // CONFIG_NOT_FOUND = 300
	case got.Served && !compat.JavaIsBlank(got.Content):
		content, md5, typ := got.Content, got.MD5, got.Type
		r.Content, r.MD5, r.ContentType, r.LastModified, r.Beta = &content, &md5, &typ, got.Modified, got.Beta
		tag := req.Tag
		if got.AutoTag != "" {
			tag = got.AutoTag
		}
		switch {
		case got.Beta:
		case !compat.JavaIsBlank(tag):
			enc := url.QueryEscape(tag)
			r.Tag = &enc
		default:
			empty := "" // the main config's encryptedDataKey column
			r.EncryptedDataKey = &empty
		}
	case !compat.JavaIsBlank(req.Tag):
		// SPECIAL_TAG_CONFIG_NOT_FOUND: the tag names no variant
		r.Response = remote.Fail(remote.ErrInvalidServerStatus, msgConfigNotFound)
		tag := req.Tag
		r.Tag = &tag
	default:
		r.Response = remote.Fail(remote.ErrInvalidServerStatus, msgConfigNotFound)
	}
	return r, nil
}

// configTypes2 are 2.5.1's ConfigType values.
var configTypes2 = map[string]bool{"properties": true, "xml": true, "json": true, "text": true, "html": true, "yaml": true, "toml": true, "unset": true}

// publish is ConfigPublishRequestHandler with ConfigOperationService.publishConfig.
func (h *configHandlers) publish(ctx context.Context, c *Call) (remote.Responder, error) {
	req := c.Req.(*remote.ConfigPublishRequest)
	fail := func(code int, msg string) (remote.Responder, error) {
		return remote.NewPlain(remote.TypeConfigPublishResponse, remote.Fail(code, msg)), nil
	}
	tenant := compat.ProcessNamespace(req.Tenant)
	content := req.Content
	contentText := content
	if !req.HasContent {
		contentText = "null"
	}
	dataIDText, groupText := nullText(req.DataID, req.HasDataID), nullText(req.Group, req.HasGroup)
	switch {
	case compat.JavaIsBlank(req.DataID) || !compat.ConfigIsValid(compat.JavaTrim(req.DataID)):
		return fail(remote.ErrInvalidParam, "invalid dataId : "+dataIDText)
	case compat.JavaIsBlank(req.Group) || !compat.ConfigIsValid(req.Group):
		return fail(remote.ErrInvalidParam, "invalid group : "+groupText)
	case compat.JavaIsBlank(content):
		return fail(remote.ErrInvalidParam, "content is blank : "+contentText)
	case compat.UTF16Len(content) > h.maxContent():
		return fail(remote.ErrInvalidParam, "invalid content, over "+strconv.Itoa(h.maxContent()))
	}
	tag, _ := req.Addition("tag")
	if !compat.JavaIsBlank(tag) {
		if !compat.ConfigIsValid(compat.JavaTrim(tag)) {
			return fail(remote.CodeFail, "invalid tag : "+tag)
		}
		if compat.UTF16Len(tag) > 16 {
			return fail(remote.CodeFail, "too long tag, over 16")
		}
	}
	typ, _ := req.Addition("type")
	if !configTypes2[typ] {
		typ = "text"
	}
	opt := func(k string) *string {
		if v, ok := req.Addition(k); ok {
			return &v
		}
		return nil
	}
	adv := compat.ConfigAdvance{ConfigTags: opt("config_tags"), Desc: opt("desc"), Use: opt("use"), Effect: opt("effect"), Type: &typ, Schema: opt("schema")}
	if err := checkAdvance(adv); err != "" {
		return fail(remote.CodeFail, err)
	}
	// a write to the main config or a variant keeps the 1.x stores' limits
	// (the config_info columns)
	if compat.UTF16Len(req.DataID) > compat.ConfigMaxDataIDLen {
		return fail(remote.ErrInvalidParam, "too long dataId, over "+strconv.Itoa(compat.ConfigMaxDataIDLen))
	}
	betaIps, _ := req.Addition("betaIps")
	pr := config.PublishRequest{DataID: req.DataID, Group: req.Group, Tenant: tenant, Content: content, AppName: opt("appName"),
		SrcUser: opt("src_user"), SrcIP: c.ClientIP(), ConfigTags: adv.ConfigTags, Desc: adv.Desc, Use: adv.Use, Effect: adv.Effect,
		Schema: adv.Schema, Type: typ, CasMD5: req.CasMD5}
	if !compat.JavaIsBlank(betaIps) {
		pr.BetaIps = betaIps
	} else if !compat.JavaIsBlank(tag) {
		pr.Tag = tag
	}
	err := h.d.Service.Publish(ctx, pr)
	c.Wrote(err)
	switch {
	case err == nil:
		return remote.NewPlain(remote.TypeConfigPublishResponse, remote.OK()), nil
	case errors.Is(err, config.ErrCasMismatch):
		if pr.BetaIps != "" || pr.Tag != "" {
			return fail(remote.CodeFail, msgCasGrayFail)
		}
		return fail(remote.CodeFail, msgCasFail)
	}
	return fail(remote.CodeFail, writeFailure(err))
}

func nullText(v string, present bool) string {
	if !present {
		return "null"
	}
	return v
}

func (h *configHandlers) maxContent() int {
	if h.d.MaxContent > 0 {
		return h.d.MaxContent
	}
	return compat.ConfigMaxContent
}

// checkAdvance is ParamUtils.checkParam(configAdvanceInfo) with its raw
// messages ("" when the fields pass).
func checkAdvance(a compat.ConfigAdvance) string {
	if a.ConfigTags != nil {
		tags := compat.JavaSplit(*a.ConfigTags, ",")
		if len(tags) > 5 {
			return "too much config_tags, over 5"
		}
		for _, t := range tags {
			if compat.UTF16Len(t) > 64 {
				return "too long tag, over 64"
			}
		}
	}
	for _, f := range []struct {
		v    *string
		name string
		max  int
	}{{a.Desc, "desc", 128}, {a.Use, "use", 32}, {a.Effect, "effect", 32}, {a.Type, "type", 32}, {a.Schema, "schema", 32768}} {
		if f.v != nil && compat.UTF16Len(*f.v) > f.max {
			return "too long " + f.name + ", over " + strconv.Itoa(f.max)
		}
	}
	return ""
}

// remove is ConfigRemoveRequestHandler: every failure answers resultCode
// 500 with errorCode 0 (ConfigRemoveResponse.buildFailResponse). A tag
// names a gray version in 2.5.1: "beta" the beta variant, "tag_<t>" the tag
// <t>; a plain tag removes that tag variant too (Java 2.5.1 looks for a
// gray named like the tag, finds none and fails with a NullPointerException:
// a Java defect; removing the variant is what the client asked for).
func (h *configHandlers) remove(ctx context.Context, c *Call) (remote.Responder, error) {
	req := c.Req.(*remote.ConfigRemoveRequest)
	fail := func(msg string) (remote.Responder, error) {
		r := remote.Response{ResultCode: remote.CodeFail, Message: msg, HasMessage: true}
		return remote.NewPlain(remote.TypeConfigRemoveResponse, r), nil
	}
	tenant := compat.ProcessNamespace(req.Tenant)
	switch {
	case !compat.JavaIsBlank(tenant) && !compat.ConfigIsValid(tenant):
		return fail("invalid tenant")
	case compat.UTF16Len(tenant) > 128:
		return fail("too long tenant, over 128")
	case compat.JavaIsBlank(req.DataID) || !compat.ConfigIsValid(compat.JavaTrim(req.DataID)):
		return fail("invalid dataId : " + nullText(req.DataID, req.HasDataID))
	case compat.JavaIsBlank(req.Group) || !compat.ConfigIsValid(req.Group):
		return fail("invalid group : " + nullText(req.Group, req.HasGroup))
	}
	tag := req.Tag
	if !compat.JavaIsBlank(tag) {
		if !compat.ConfigIsValid(compat.JavaTrim(tag)) {
			return fail("invalid tag : " + tag)
		}
		if compat.UTF16Len(tag) > 16 {
			return fail("too long tag, over 16")
		}
	}
	var err error
	switch {
	case compat.JavaIsBlank(tag):
		err = h.d.Service.Delete(ctx, config.DeleteRequest{DataID: req.DataID, Group: req.Group, Tenant: tenant, SrcIP: c.ClientIP()})
	case tag == "beta":
		err = h.d.Service.StopBeta(ctx, req.DataID, req.Group, tenant)
	default:
		if len(tag) > 4 && tag[:4] == "tag_" {
			tag = tag[4:]
		}
		err = h.d.Service.Delete(ctx, config.DeleteRequest{DataID: req.DataID, Group: req.Group, Tenant: tenant, Tag: tag, SrcIP: c.ClientIP()})
	}
	c.Wrote(err)
	if err != nil {
		return fail(writeFailure(err))
	}
	return remote.NewPlain(remote.TypeConfigRemoveResponse, remote.OK()), nil
}

// listen is ConfigChangeBatchListenRequestHandler: it registers (or drops)
// the connection's listeners and answers the listened configs whose MD5
// differs from the client's.
func (h *configHandlers) listen(_ context.Context, c *Call) (remote.Responder, error) {
	req := c.Req.(*remote.ConfigBatchListenRequest)
	tag := req.Headers.Get(tagHeader)
	if !compat.JavaIsBlank(tag) {
		if !compat.ConfigIsValid(compat.JavaTrim(tag)) {
			return nil, &Error{Code: remote.ErrServer, Msg: "invalid tag : " + tag}
		}
		if compat.UTF16Len(tag) > 16 {
			return nil, &Error{Code: remote.ErrServer, Msg: "too long tag, over 16"}
		}
	}
	if compat.JavaIsBlank(tag) {
		tag = autoTag(c)
	}
	r := &remote.ConfigChangeBatchListenResponse{Response: remote.OK(), ChangedConfigs: []remote.ConfigContext{}}
	for _, lc := range req.Contexts {
		gk := compat.GroupKey(lc.DataID, lc.Group, lc.Tenant)
		if !req.Listen {
			h.n.remove(c.Conn.ID, gk)
			continue
		}
		h.n.add(c.Conn.ID, gk, lc)
		if h.d.Service.MD5(gk, c.ClientIP(), tag) != lc.MD5 {
			r.ChangedConfigs = append(r.ChangedConfigs, remote.ConfigContext{Group: lc.Group, DataID: lc.DataID, Tenant: lc.Tenant})
		}
	}
	return r, nil
}

// Error is an exception with a Nacos error code escaping a handler:
// answered as ErrorResponse with that code.
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }
