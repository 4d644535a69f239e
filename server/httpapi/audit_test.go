package httpapi

import (
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/server/audit"
)

// TestEveryWriteIsAudited: every route that writes replicated state (CP,
// mixed, an instance write) carries an audit entry, and no entry records a
// secret parameter.
func TestEveryWriteIsAudited(t *testing.T) {
	table := MustTable(CoreRoutes(nil, nil), MigrateRoutes(nil, nil), ConfigRoutes(ConfigDeps{}), AuthRoutes(nil),
		NamingRoutes(NamingDeps{}))
	n := 0
	for _, r := range table.Routes() {
		if r.Method == MethodAll || r.Method == fiber.MethodHead || r.Unserved {
			continue
		}
		if (r.Class == CP || r.Class == Mixed || r.ClassOf != nil) && r.Audit == nil {
			t.Errorf("%s %s writes (%s) and is not audited", r.Method, r.Path, r.Class)
		}
		if r.Audit == nil {
			continue
		}
		n++
		for _, p := range r.Audit.Params {
			if p == "password" || p == "accessToken" || p == "newPassword" || p == "oldPassword" {
				t.Errorf("%s %s records the secret parameter %s", r.Method, r.Path, p)
			}
		}
	}
	if n < 30 {
		t.Fatalf("only %d audited routes", n)
	}
}

func TestClip(t *testing.T) {
	if got := clip("abcdé", 5); got != "abcd…" {
		t.Errorf("clip = %q", got)
	}
	if got := clip("abc", 5); got != "abc" {
		t.Errorf("clip = %q", got)
	}
}

// BenchmarkAudit is the edge's cost per request: a beat (not audited: one
// lookup) and a registration (an entry handed to a recorder that drops it),
// against no audit middleware.
func BenchmarkAudit(b *testing.B) {
	for _, bc := range []struct {
		name, method, uri string
		audit             bool
	}{
		{"beat/none", "PUT", "/nacos/v1/ns/instance/beat?serviceName=svc&beat=x", false},
		{"beat/audit", "PUT", "/nacos/v1/ns/instance/beat?serviceName=svc&beat=x", true},
		{"register/none", "POST", "/nacos/v1/ns/instance?serviceName=svc&ip=10.0.0.1&port=80", false},
		{"register/audit", "POST", "/nacos/v1/ns/instance?serviceName=svc&ip=10.0.0.1&port=80", true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			app := fiber.New()
			ok := func(c *fiber.Ctx) error { return c.SendString("ok") }
			table := MustTable([]Route{
				route(fiber.MethodPut, "/v1/ns/instance/beat", AP, nil, ok),
				audited(route(fiber.MethodPost, "/v1/ns/instance", AP, nil, ok), "instance.register", auditInstance, nil),
			})
			if bc.audit {
				app.Use(Audit("/nacos", table, func(audit.Entry) {}))
			}
			table.Mount(app.Group("/nacos"))
			h := app.Handler()
			var ctx fasthttp.RequestCtx
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				ctx.Request.Reset()
				ctx.Response.Reset()
				ctx.Request.Header.SetMethod(bc.method)
				ctx.Request.SetRequestURI(bc.uri)
				h(&ctx)
			}
		})
	}
}
