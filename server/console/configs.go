package console

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/config"
	"github.com/nacosd/nacosd/server/httpapi"
)

// configRow is one row of the console's config listing: the listing fields
// of /v1/cs/configs plus md5, type and modification time, without content.
type configRow struct {
	ID         string `json:"id"`
	DataID     string `json:"dataId"`
	Group      string `json:"group"`
	Tenant     string `json:"tenant"`
	AppName    string `json:"appName"`
	Type       string `json:"type"`
	MD5        string `json:"md5"`
	ModifyTime int64  `json:"modifyTime"`
}

type configPage struct {
	TotalCount     int         `json:"totalCount"`
	PageNumber     int         `json:"pageNumber"`
	PagesAvailable int         `json:"pagesAvailable"`
	PageItems      []configRow `json:"pageItems"`
}

// positiveInt reads a required positive integer parameter.
func positiveInt(p httpapi.Params, name string, max int) (int, error) {
	v, _ := p.Raw(name)
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return 0, compat.IllegalArgument(name + " must be a positive integer")
	}
	return min(n, max), nil
}

// searchConfigs is GET /v1/console/configs: the config search of
// /v1/cs/configs?search=blur|accurate (same dataId/group/appName/tenant/
// config_tags semantics) plus a content filter, which the 1.x API lacks.
// Parameters: search (blur, the default, or accurate), dataId, group,
// appName, tenant, config_tags, content, pageNo, pageSize (at most 500).
func (h *handlers) searchConfigs(c *fiber.Ctx) error {
	if h.Config == nil {
		return notAvailable("config search")
	}
	p := httpapi.ParamsOf(c)
	pageNo, err := positiveInt(p, "pageNo", 1<<30)
	if err != nil {
		return err
	}
	pageSize, err := positiveInt(p, "pageSize", 500)
	if err != nil {
		return err
	}
	raw := func(k string) string { v, _ := p.Raw(k); return v }
	req := config.SearchRequest{Blur: raw("search") != "accurate", DataID: raw("dataId"), Group: raw("group"),
		AppName: raw("appName"), Tenant: raw("tenant"), ConfigTags: raw("config_tags"), Content: raw("content"),
		PageNo: pageNo, PageSize: pageSize}
	total, rows := h.Config.Search(req)
	out := configPage{TotalCount: total, PageNumber: pageNo, PagesAvailable: config.PagesAvailable(total, pageSize),
		PageItems: make([]configRow, 0, len(rows))}
	for _, r := range rows {
		in := r.Info
		out.PageItems = append(out.PageItems, configRow{ID: strconv.FormatInt(in.ID, 10), DataID: in.DataID, Group: in.Group,
			Tenant: in.Tenant, AppName: in.AppName, Type: in.Type, MD5: in.MD5, ModifyTime: in.Modified})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return httpapi.SendJSON(c, b)
}

// md5Query is one item of POST /v1/console/configs/md5.
type md5Query struct {
	GroupKey string `json:"groupKey"`
	IP       string `json:"ip"`
}

type md5Answer struct {
	GroupKey string `json:"groupKey"`
	IP       string `json:"ip"`
	DataID   string `json:"dataId"`
	Group    string `json:"group"`
	Tenant   string `json:"tenant"`
	MD5      string `json:"md5"` // "" when the config does not exist
}

// maxMD5Queries bounds one request (the 1.x long poll allows 10000 keys).
const maxMD5Queries = 10000

// configMD5 is POST /v1/console/configs/md5 with a JSON array of
// {"groupKey","ip"}: for each, the MD5 the server serves that client IP
// (its beta MD5 when the IP is a beta IP) and the parsed key, so the
// listener pages can tell whether a listener is up to date.
func (h *handlers) configMD5(c *fiber.Ctx) error {
	if h.Config == nil {
		return notAvailable("config MD5s")
	}
	var qs []md5Query
	if err := json.Unmarshal(c.Body(), &qs); err != nil {
		return compat.IllegalArgument("body must be a JSON array of {\"groupKey\",\"ip\"}: " + err.Error())
	}
	if len(qs) > maxMD5Queries {
		return compat.IllegalArgument("at most " + strconv.Itoa(maxMD5Queries) + " items")
	}
	out := make([]md5Answer, 0, len(qs))
	for _, q := range qs {
		a := md5Answer{GroupKey: q.GroupKey, IP: q.IP}
		var err error
		if a.DataID, a.Group, a.Tenant, err = compat.ParseGroupKey(q.GroupKey); err != nil {
			return compat.IllegalArgument("invalid groupKey " + strconv.Quote(q.GroupKey))
		}
		a.MD5 = h.Config.MD5(q.GroupKey, q.IP, "")
		out = append(out, a)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return httpapi.SendJSON(c, b)
}
