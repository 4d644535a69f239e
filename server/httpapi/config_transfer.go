package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/config"
)

// Export, import and clone (config-v1.md §3.9–§3.11).

// export is GET ?export=true (v1) and ?exportV2=true.
func (h *configHandlers) export(c *fiber.Ctx, p Params, v2 bool) error {
	dataID, _ := p.Raw("dataId")
	group, _ := p.Raw("group")
	appName, _ := p.Raw("appName")
	tenant := compat.ProcessNamespace(p.Spring("tenant", ""))
	ids, present, err := longList(c, "ids")
	if err != nil {
		return err
	}
	if !present { // ids.removeAll(...) on a null list: NullPointerException (Java 17's words)
		return compat.ConfigServerError(`Cannot invoke "java.util.List.removeAll(java.util.Collection)" because "ids" is null`)
	}
	list := h.s.ExportList(config.ExportFilter{IDs: ids, DataID: dataID, Group: group, AppName: appName, Tenant: tenant})
	items := make([]compat.ExportItem, len(list))
	for i, in := range list {
		items[i] = compat.ExportItem{Group: in.Group, DataID: in.DataID, Content: in.Content, AppName: strp(in.AppName)}
		if v2 {
			items[i].Desc, items[i].Type = in.Desc, strp(in.Type)
		}
	}
	now := h.s.Now().In(h.s.Location())
	zb, err := compat.ExportZip(items, v2, now)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentDisposition, "attachment;filename="+compat.ExportFileName(now))
	c.Set(fiber.HeaderContentType, "application/octet-stream;charset=UTF-8") // ResponseEntity's, charset from NacosWebFilter
	return c.Send(zb)
}

func resultJSON(code int, msg string, r *compat.ImportResult) []byte {
	return compat.RestResultJSON(code, &msg, r.AppendJSON)
}

// importConfigs is POST ?import=true (multipart).
func (h *configHandlers) importConfigs(c *fiber.Ctx, p Params) error {
	srcUser := opt(p, "src_user")
	namespace := opt(p, "namespace")
	policy, err := policyParam(p)
	if err != nil {
		return err
	}
	fh, ferr := c.FormFile("file")
	if ferr != nil || fh == nil {
		return sendCfgJSON(c, compat.ResultCodeJSON(compat.ResultDataEmpty, false))
	}
	if fh.Size > MultipartFileLimit { // Spring's max-file-size, refused before the controller
		return importTooLarge()
	}
	tenant := ""
	if namespace != nil {
		tenant = compat.ProcessNamespace(*namespace)
	}
	if !compat.JavaIsBlank(tenant) && !h.s.NamespaceExists(tenant) {
		return sendCfgJSON(c, compat.ResultCodeJSON(compat.ResultNamespaceNotExist, true))
	}
	f, err := fh.Open()
	if err != nil {
		return sendCfgJSON(c, compat.ResultCodeJSON(compat.ResultParsingDataFailed, true))
	}
	data, err := io.ReadAll(io.LimitReader(f, 64<<20))
	_ = f.Close()
	if err != nil {
		return sendCfgJSON(c, compat.ResultCodeJSON(compat.ResultParsingDataFailed, true))
	}
	arc, err := compat.ReadImportZip(data)
	if err != nil {
		var ie *compat.ImportError
		if errors.As(err, &ie) {
			return sendCfgJSON(c, compat.ResultCodeJSON(ie.Code, true))
		}
		return err
	}
	if len(arc.Items) == 0 {
		return sendCfgJSON(c, compat.ResultCodeJSON(compat.ResultDataEmpty, true))
	}
	items := make([]config.BatchItem, len(arc.Items))
	for i, it := range arc.Items {
		items[i] = config.BatchItem{DataID: it.DataID, Group: it.Group, Content: it.Content, AppName: it.AppName, Desc: it.Desc, Type: it.Type}
	}
	res, err := h.s.BatchInsert(c.UserContext(), tenant, items, policy, srcUser, clientIP(c))
	if err != nil {
		return err
	}
	if len(arc.Unrecognized) > 0 {
		res.HasUnrecognized, res.Unrecognized = true, arc.Unrecognized
	}
	return sendCfgJSON(c, resultJSON(200, "导入成功", &res))
}

// policyParam is @RequestParam(defaultValue = "ABORT") SameConfigPolicy.
func policyParam(p Params) (config.Policy, error) {
	v := p.Spring("policy", "ABORT")
	pol, ok := config.ParsePolicy(v)
	if !ok {
		// Spring 5.3's ConversionFailedException: "for value [<concise>]"
		cv := springConcise(v)
		return "", compat.ConfigServerError("Failed to convert value of type 'java.lang.String' to required type 'com.alibaba.nacos.config.server.model.SameConfigPolicy'; nested exception is org.springframework.core.convert.ConversionFailedException: Failed to convert from type [java.lang.String] to type [@org.springframework.web.bind.annotation.RequestParam com.alibaba.nacos.config.server.model.SameConfigPolicy] for value ["+cv+"]; nested exception is java.lang.IllegalArgumentException: No enum constant com.alibaba.nacos.config.server.model.SameConfigPolicy."+v,
			"Failed to convert from type [java.lang.String] to type [@org.springframework.web.bind.annotation.RequestParam com.alibaba.nacos.config.server.model.SameConfigPolicy] for value ["+cv+"]; nested exception is java.lang.IllegalArgumentException: No enum constant com.alibaba.nacos.config.server.model.SameConfigPolicy."+v,
			"No enum constant com.alibaba.nacos.config.server.model.SameConfigPolicy."+v)
	}
	return pol, nil
}

// springConcise is ObjectUtils.nullSafeConciseToString for a string: at
// most 100 characters, then " (truncated)...".
func springConcise(v string) string {
	if r := []rune(v); len(r) > 100 {
		return string(r[:100]) + " (truncated)..."
	}
	return v
}

type cloneBean struct {
	CfgID  javaLong `json:"cfgId"`
	DataID *string  `json:"dataId"`
	Group  *string  `json:"group"`
}

// javaLong is a java.lang.Long field as Jackson binds it: null, a JSON
// number (a fraction truncated) or a string holding an integer (trimmed;
// "" is null). Config ids travel as strings (they exceed 2^53), and the
// Java console sends them back that way as cfgId.
type javaLong struct {
	set bool
	n   int64
}

func (l *javaLong) UnmarshalJSON(b []byte) error {
	*l = javaLong{}
	s := strings.TrimSpace(string(b))
	switch {
	case s == "null":
		return nil
	case strings.HasPrefix(s, `"`):
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		str = strings.TrimSpace(str)
		if str == "" {
			return nil
		}
		n, err := strconv.ParseInt(str, 10, 64)
		if err != nil {
			return fmt.Errorf("cannot deserialize value of type `long` from String %q: not a valid `long` value", str)
		}
		*l = javaLong{set: true, n: n}
		return nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*l = javaLong{set: true, n: n}
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f || f >= 1<<63 || f < -(1<<63) {
		return fmt.Errorf("cannot deserialize value of type `long` from %s", s)
	}
	*l = javaLong{set: true, n: int64(f)}
	return nil
}

// clone is POST ?clone=true with a JSON array body.
func (h *configHandlers) clone(c *fiber.Ctx, p Params) error {
	srcUser := opt(p, "src_user")
	ns, err := p.SpringRequired("tenant")
	if err != nil {
		return err
	}
	policy, err := policyParam(p)
	if err != nil {
		return err
	}
	var beans []*cloneBean
	if body := c.Body(); len(body) > 0 {
		if msg, cause, ok := compat.SpringBodyError(string(body), "java.util.ArrayList<com.alibaba.nacos.config.server.controller.parameters.SameNamespaceCloneConfigBean>", true); ok {
			return compat.ConfigServerError(msg, cause)
		}
		if err := json.Unmarshal(body, &beans); err != nil {
			return compat.ConfigServerError("JSON parse error: "+err.Error(), err.Error())
		}
	}
	var list []*cloneBean
	seen := map[int64]bool{}
	for _, b := range beans {
		if b == nil {
			continue
		}
		if b.CfgID.set {
			if seen[b.CfgID.n] {
				continue
			}
			seen[b.CfgID.n] = true
		}
		list = append(list, b)
	}
	if len(list) == 0 {
		return sendCfgJSON(c, compat.ResultCodeJSON(compat.ResultNoSelectedConfig, true))
	}
	tenant := compat.ProcessNamespace(ns)
	if !compat.JavaIsBlank(tenant) && !h.s.NamespaceExists(tenant) {
		return sendCfgJSON(c, compat.ResultCodeJSON(compat.ResultNamespaceNotExist, true))
	}
	var items []config.BatchItem
	for _, b := range list {
		if !b.CfgID.set {
			continue
		}
		in := h.s.InfoByID(b.CfgID.n)
		if in == nil {
			continue
		}
		it := config.BatchItem{DataID: in.DataID, Group: in.Group, Content: in.Content, AppName: strp(in.AppName),
			Desc: in.Desc, Type: strp(in.Type)}
		if b.DataID != nil && !compat.JavaIsBlank(*b.DataID) {
			it.DataID = *b.DataID
		}
		if b.Group != nil && !compat.JavaIsBlank(*b.Group) {
			it.Group = *b.Group
		}
		items = append(items, it)
	}
	if len(items) == 0 {
		return sendCfgJSON(c, compat.ResultCodeJSON(compat.ResultDataEmpty, true))
	}
	res, err := h.s.BatchInsert(c.UserContext(), tenant, items, policy, srcUser, clientIP(c))
	if err != nil {
		return err
	}
	return sendCfgJSON(c, resultJSON(200, "Clone Completed Successfully", &res))
}
