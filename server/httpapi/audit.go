package httpapi

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/audit"
)

// auditRoute is one audited mapping: the action it records, the request
// parameters that say what it changed, and refine, which may name the
// action more precisely from the parameters (a beta stop, an import).
type auditRoute struct {
	action string
	params []string
	refine func(p Params) string
}

// auditRoutes are the changes the audit trail records, keyed "METHOD path"
// below the context path as the router matches it (the @Secured table's
// keys). Beats, reads, long polls and node-to-node protocol calls are not
// in it. Never list a secret parameter (password, accessToken).
func auditRoutes() map[string]auditRoute {
	t := map[string]auditRoute{}
	add := func(method, path, action string, params []string, refine func(Params) string) {
		t[method+" "+path] = auditRoute{action, params, refine}
	}
	cfg := []string{"tenant", "group", "dataId", "tag", "betaIps"}
	add("POST", "/v1/cs/configs", "config.publish", append(cfg, "policy"), func(p Params) string {
		switch {
		case param(p, "import", "true"):
			return "config.import"
		case param(p, "clone", "true"):
			return "config.clone"
		}
		return ""
	})
	add("DELETE", "/v1/cs/configs", "config.delete", []string{"tenant", "group", "dataId", "tag", "ids"}, func(p Params) string {
		switch {
		case param(p, "beta", "true"):
			return "config.beta.stop"
		case param(p, "delType", "ids"):
			return "config.delete.batch"
		}
		return ""
	})
	inst := []string{"namespaceId", "groupName", "serviceName", "clusterName", "ip", "port", "ephemeral"}
	for _, base := range []string{"/v1/ns/instance", "/v1/ns/api"} {
		add("POST", base, "instance.register", inst, nil)
		add("DELETE", base, "instance.deregister", inst, nil)
		add("PUT", base, "instance.update", append(inst, "enabled", "weight"), nil)
		add("PATCH", base, "instance.patch", append(inst, "enabled", "weight"), nil)
		add("PUT", base+"/metadata/batch", "instance.metadata.update", []string{"namespaceId", "serviceName", "consistencyType", "instances"}, nil)
		add("DELETE", base+"/metadata/batch", "instance.metadata.delete", []string{"namespaceId", "serviceName", "consistencyType", "instances"}, nil)
	}
	for _, p := range []string{"/v1/ns/health", "/v1/ns/health/instance"} {
		add("PUT", p, "instance.health", append(inst[:len(inst)-1:len(inst)-1], "healthy"), nil)
	}
	svc := []string{"namespaceId", "groupName", "serviceName"}
	add("POST", "/v1/ns/service", "service.create", svc, nil)
	add("PUT", "/v1/ns/service", "service.update", svc, nil)
	add("DELETE", "/v1/ns/service", "service.delete", svc, nil)
	add("PUT", "/v1/ns/cluster", "cluster.update", []string{"namespaceId", "serviceName", "clusterName"}, nil)
	for _, p := range []string{"/v1/ns/operator/switches", "/v1/ns/ops/switches"} {
		add("PUT", p, "switch.update", []string{"entry", "value", "debug"}, nil)
	}
	for _, p := range []string{"/v1/core/ops/log", "/v1/cs/ops/log", "/v1/ns/operator/log", "/v1/ns/ops/log"} {
		add("PUT", p, "log.level", []string{"logName", "logLevel"}, nil)
	}
	for _, p := range []string{"/v1/auth/users", "/v1/auth"} {
		add("POST", p, "user.create", []string{"username"}, nil)
		add("PUT", p, "user.update", []string{"username"}, nil)
		add("DELETE", p, "user.delete", []string{"username"}, nil)
	}
	for _, p := range []string{"/v1/auth/users/password", "/v1/auth/password"} {
		add("PUT", p, "user.password", nil, nil)
	}
	add("POST", "/v1/auth/roles", "role.add", []string{"role", "username"}, nil)
	add("DELETE", "/v1/auth/roles", "role.delete", []string{"role", "username"}, nil)
	add("POST", "/v1/auth/permissions", "permission.add", []string{"role", "resource", "action"}, nil)
	add("DELETE", "/v1/auth/permissions", "permission.delete", []string{"role", "resource", "action"}, nil)
	add("POST", "/v1/console/namespaces", "namespace.create", []string{"customNamespaceId", "namespaceName"}, nil)
	add("PUT", "/v1/console/namespaces", "namespace.update", []string{"namespace", "namespaceShowName"}, nil)
	add("DELETE", "/v1/console/namespaces", "namespace.delete", []string{"namespaceId"}, nil)
	for _, p := range []string{"config", "user", "role"} {
		add("POST", "/v1/nacosd/migrate/"+p, "migrate."+p, []string{"dryRun"}, nil)
	}
	add("POST", "/v1/core/cluster/server/leave", "member.leave", nil, nil)
	return t
}

// maxAuditValue bounds one target value in the trail.
const maxAuditValue = 256

// Audit is the audit trail's HTTP edge: for each request the audit table
// names (by method and path, as Secured looks requests up), once the
// handler chain has answered, it hands record an entry with the caller,
// the client address, what was asked and the answer's status. Other
// requests pass with one map lookup (GET and HEAD with none). record must
// not block (audit.Log.Record queues). Register it after recover and
// before Secured, so that refusals and panics are recorded too.
func Audit(contextPath string, record func(audit.Entry)) fiber.Handler {
	table := auditRoutes()
	if contextPath == "/" {
		contextPath = ""
	}
	return func(c *fiber.Ctx) error {
		if c.Request().Header.IsGet() || c.Request().Header.IsHead() {
			return c.Next()
		}
		var buf [128]byte
		key, ok := appendRouteKey(buf[:0], c, contextPath)
		if !ok {
			return c.Next()
		}
		rt, ok := table[string(key)] // no allocation for the lookup
		if !ok {
			return c.Next()
		}
		err := c.Next()
		record(auditEntry(c, rt, err))
		return err
	}
}

func auditEntry(c *fiber.Ctx, rt auditRoute, err error) audit.Entry {
	p := ParamsOf(c)
	e := audit.Entry{Action: rt.action, Method: methodName(c.Method()), Path: strings.Clone(c.Path()),
		IP: clientIP(c), Remote: c.Context().RemoteIP().String(), Status: answeredStatus(c, err)}
	if rt.refine != nil {
		if a := rt.refine(p); a != "" {
			e.Action = a
		}
	}
	if pr, ok := PrincipalOf(c); ok {
		e.User = pr.Username
	}
	switch {
	case e.Status >= 200 && e.Status < 300:
		e.Result = "ok"
	case e.Status == fiber.StatusUnauthorized || e.Status == fiber.StatusForbidden:
		e.Result = "denied"
	default:
		e.Result = "failed"
	}
	// Secured has dropped a HeaderForwarded no node vouched for (auth on)
	e.Relayed = len(c.Request().Header.Peek(HeaderForwarded)) > 0 || strings.Contains(userAgent(c), "Nacos-Server")
	for _, name := range rt.params {
		if v, ok := p.Raw(name); ok {
			e.Target = append(e.Target, audit.Param{Name: name, Value: clip(v, maxAuditValue)})
		}
	}
	return e
}

// answeredStatus is the status the client gets: the response's, or for an
// error still to be rendered, the one the error handler will give it.
func answeredStatus(c *fiber.Ctx, err error) int {
	if err == nil {
		return c.Response().StatusCode()
	}
	var ce *compat.Error
	if errors.As(err, &ce) {
		return ce.Status
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	return fiber.StatusInternalServerError
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
