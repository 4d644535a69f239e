package httpapi

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/audit"
)

// AuditSpec is what the audit trail records for a route: the action, the
// request parameters that say what it changed, and refine, which may name
// the action more precisely from the parameters (a beta stop, an import).
// Never list a secret parameter (password, accessToken).
type AuditSpec struct {
	Action string
	Params []string
	Refine func(p Params) string
}

// Parameters the audit entries of related routes share.
var (
	auditConfig   = []string{"tenant", "group", "dataId", "tag", "betaIps"}
	auditInstance = []string{"namespaceId", "groupName", "serviceName", "clusterName", "ip", "port", "ephemeral"}
	auditService  = []string{"namespaceId", "groupName", "serviceName"}
)

func refinePublish(p Params) string {
	switch {
	case param(p, "import", "true"):
		return "config.import"
	case param(p, "clone", "true"):
		return "config.clone"
	}
	return ""
}

func refineDelete(p Params) string {
	switch {
	case param(p, "beta", "true"):
		return "config.beta.stop"
	case param(p, "delType", "ids"):
		return "config.delete.batch"
	}
	return ""
}

// maxAuditValue bounds one target value in the trail.
const maxAuditValue = 256

// Audit is the audit trail's HTTP edge: for each request whose route in
// the table has an AuditSpec, once the handler chain has answered, it
// hands record an entry with the caller, the client address, what was
// asked and the answer's status. Other requests pass with one map lookup
// (GET and HEAD with none). record must not block (audit.Log.Record
// queues). Register it after recover and before the gate, so that
// refusals and panics are recorded too.
func Audit(contextPath string, table *Table, record func(audit.Entry)) fiber.Handler {
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
		r := table.lookup(string(key)) // no allocation for the lookup
		if r == nil || r.Audit == nil {
			return c.Next()
		}
		err := c.Next()
		record(auditEntry(c, r.Audit, err))
		return err
	}
}

func auditEntry(c *fiber.Ctx, rt *AuditSpec, err error) audit.Entry {
	p := ParamsOf(c)
	e := audit.Entry{Action: rt.Action, Method: methodName(c.Method()), Path: strings.Clone(c.Path()),
		IP: clientIP(c), Remote: c.Context().RemoteIP().String(), Status: answeredStatus(c, err)}
	if rt.Refine != nil {
		if a := rt.Refine(p); a != "" {
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
	for _, name := range rt.Params {
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
