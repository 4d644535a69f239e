package httpapi

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/config"
)

// History endpoints (config-v1.md §3.14).

func (h *configHandlers) historyDispatch(c *fiber.Ctx) error {
	p := ParamsOf(c)
	if param(p, "search", "accurate") {
		return h.historyList(c, p)
	}
	return h.historyDetail(c, p)
}

func (h *configHandlers) historyJSON(r *config.History, full bool) compat.ConfigHistoryInfo {
	hi := compat.ConfigHistoryInfo{ID: r.Nid, DataID: r.DataID, Group: r.Group, Tenant: r.Tenant,
		AppName: strp(r.AppName), SrcIP: emptyToNil(r.SrcIP), SrcUser: r.SrcUser, OpType: compat.HistoryOpType(r.Op),
		CreatedTime: compat.HistoryCreatedTime(h.s.Location()), LastModTime: msTime(r.Modified, h.s)}
	if full {
		hi.MD5, hi.Content = strp(r.MD5), strp(r.Content)
	}
	return hi
}

func (h *configHandlers) historyList(c *fiber.Ctx, p Params) error {
	v, err := required(p, "dataId", "group")
	if err != nil {
		return err
	}
	tenant := p.Spring("tenant", "")
	pageNo, err := springIntOptional(p, "pageNo", 1)
	if err != nil {
		return err
	}
	pageSize, err := springIntOptional(p, "pageSize", 100)
	if err != nil {
		return err
	}
	pageSize = min(500, pageSize)
	if pageNo <= 0 || pageSize <= 0 {
		return compat.ConfigIllegalArgument("pageNo and pageSize must be greater than zero")
	}
	total, rows := h.s.HistoryPage(v[0], v[1], tenant, pageNo, pageSize)
	w := compat.NewJSON(256)
	compat.AppendPage(w, total, pageNo, config.PagesAvailable(total, pageSize), len(rows), func(w *compat.JSON, i int) {
		hi := h.historyJSON(rows[i], false)
		hi.AppendJSON(w)
	})
	return sendCfgJSON(c, w.Bytes())
}

// springLongRequired is a required Long @RequestParam.
func springLongRequired(p Params, name string) (int64, error) {
	v, ok := p.Raw(name)
	if !ok {
		return 0, compat.ConfigMissingParam(name, "Long")
	}
	if strings.TrimSpace(v) == "" { // Spring 5.3: converted to null
		return 0, compat.ConfigServerError("Required request parameter '" + name + "' for method parameter type Long is present but converted to null")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, compat.ConfigParamTypeMismatch("java.lang.Long", v)
	}
	return n, nil
}

func (h *configHandlers) sendHistory(c *fiber.Ctx, dataID, group string, r *config.History) error {
	if r == nil {
		return emptyOK(c)
	}
	if r.DataID != dataID || r.Group != group {
		return compat.ConfigError(compat.Forbidden("Please check dataId and group."))
	}
	hi := h.historyJSON(r, true)
	w := compat.NewJSON(256 + len(r.Content))
	hi.AppendJSON(w)
	return sendCfgJSON(c, w.Bytes())
}

func (h *configHandlers) historyDetail(c *fiber.Ctx, p Params) error {
	v, err := required(p, "dataId", "group")
	if err != nil {
		return err
	}
	nid, err := springLongRequired(p, "nid")
	if err != nil {
		return err
	}
	return h.sendHistory(c, v[0], v[1], h.s.HistoryByNid(nid))
}

func (h *configHandlers) historyPrevious(c *fiber.Ctx) error {
	p := ParamsOf(c)
	v, err := required(p, "dataId", "group")
	if err != nil {
		return err
	}
	id, err := springLongRequired(p, "id")
	if err != nil {
		return err
	}
	return h.sendHistory(c, v[0], v[1], h.s.HistoryPrevious(id))
}

func msTime(ms int64, s *config.Service) time.Time { return time.UnixMilli(ms).In(s.Location()) }
