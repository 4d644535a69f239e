package httpapi

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/config"
)

// Console namespaces, /v1/console/namespaces (console-auth-core-v1.md §2).

type namespaceHandlers struct {
	s   *config.Service
	log *slog.Logger
}

func namespaceRoutes(s *config.Service, log *slog.Logger) []Route {
	h := &namespaceHandlers{s: s, log: log}
	ns := func() *Secured { return secFixed(auth.ActionWrite, "console/namespaces", false) }
	return withHead([]Route{
		route(fiber.MethodGet, "/v1/console/namespaces", Read, nil, h.get),
		audited(route(fiber.MethodPost, "/v1/console/namespaces", CP, ns(), h.create), "namespace.create", []string{"customNamespaceId", "namespaceName"}, nil),
		audited(route(fiber.MethodPut, "/v1/console/namespaces", CP, ns(), h.update), "namespace.update", []string{"namespace", "namespaceShowName"}, nil),
		audited(route(fiber.MethodDelete, "/v1/console/namespaces", CP, ns(), h.delete), "namespace.delete", []string{"namespaceId"}, nil),
	}, methodNotSupported)
}

// namespaceQuota is the constant quota every namespace reports.
const namespaceQuota = 200

func (h *namespaceHandlers) get(c *fiber.Ctx) error {
	p := ParamsOf(c)
	if param(p, "show", "all") {
		id, err := p.SpringRequired("namespaceId")
		if err != nil {
			return err
		}
		var n compat.Namespace
		if compat.JavaIsBlank(id) {
			n = compat.Namespace{ID: "", ShowName: "Public", Quota: namespaceQuota, ConfigCount: h.s.CountTenant(""),
				Type: 0, Desc: strp("Public Namespace")}
		} else {
			t, ok := h.s.Namespace(id)
			if !ok { // NullPointerException in Java (Java 17's words)
				return compat.ServerError(`Cannot invoke "com.alibaba.nacos.config.server.model.TenantInfo.getTenantName()" because "tenantInfo" is null`)
			}
			n = compat.Namespace{ID: t.ID, ShowName: t.Name, Quota: namespaceQuota, ConfigCount: h.s.CountTenant(id), Type: 2, Desc: t.Desc}
		}
		w := compat.NewJSON(160)
		n.AppendAllJSON(w)
		return SendJSON(c, w.Bytes())
	}
	if param(p, "checkNamespaceIdExist", "true") {
		id, err := p.SpringRequired("customNamespaceId")
		if err != nil {
			return err
		}
		ok := !compat.JavaIsBlank(id) && h.s.NamespaceExists(id)
		return SendJSON(c, []byte(boolText(ok)))
	}
	list := h.s.Namespaces()
	body := compat.RestResultOK(func(w *compat.JSON) {
		w.BeginArray()
		pub := compat.Namespace{ID: "", ShowName: "public", Quota: namespaceQuota, ConfigCount: h.s.CountTenant(""), Type: 0}
		pub.AppendJSON(w)
		for _, t := range list {
			n := compat.Namespace{ID: t.ID, ShowName: t.Name, Quota: namespaceQuota, ConfigCount: h.s.CountTenant(t.ID), Type: 2}
			n.AppendJSON(w)
		}
		w.EndArray()
	})
	return SendJSON(c, body)
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func (h *namespaceHandlers) create(c *fiber.Ctx) error {
	p := ParamsOf(c)
	id, err := p.SpringRequired("customNamespaceId")
	if err != nil {
		return err
	}
	name, err := p.SpringRequired("namespaceName")
	if err != nil {
		return err
	}
	ok, err := h.s.CreateNamespace(c.UserContext(), id, name, opt(p, "namespaceDesc"))
	if err != nil {
		return err
	}
	return SendJSON(c, []byte(boolText(ok)))
}

func (h *namespaceHandlers) update(c *fiber.Ctx) error {
	p := ParamsOf(c)
	id, err := p.SpringRequired("namespace")
	if err != nil {
		return err
	}
	name, err := p.SpringRequired("namespaceShowName")
	if err != nil {
		return err
	}
	if err := h.s.UpdateNamespace(c.UserContext(), id, name, opt(p, "namespaceDesc")); err != nil {
		return err
	}
	return SendJSON(c, []byte("true"))
}

func (h *namespaceHandlers) delete(c *fiber.Ctx) error {
	id, err := ParamsOf(c).SpringRequired("namespaceId")
	if err != nil {
		return err
	}
	if err := h.s.DeleteNamespace(c.UserContext(), id); err != nil {
		return err
	}
	return SendJSON(c, []byte("true"))
}
