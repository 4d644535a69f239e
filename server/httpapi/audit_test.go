package httpapi

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/server/audit"
)

// TestAuditRoutesExist: every mapping the audit table names is one Java
// 1.4.8 serves and nacosd serves too (conformance/routes.txt), or one of
// nacosd's own migration endpoints: a misspelt path would audit nothing.
func TestAuditRoutesExist(t *testing.T) {
	f, err := os.Open("../../conformance/routes.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	served := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) >= 4 && cols[3] == "served" {
			served[cols[1]+" "+cols[0]] = true
		}
	}
	for key, rt := range auditRoutes() {
		if !served[key] && !strings.Contains(key, " /v1/nacosd/migrate/") {
			t.Errorf("%s (%s) is not a served route", key, rt.action)
		}
		for _, p := range rt.params {
			if p == "password" || p == "accessToken" || p == "newPassword" || p == "oldPassword" {
				t.Errorf("%s records the secret parameter %s", key, p)
			}
		}
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
			if bc.audit {
				app.Use(Audit("/nacos", func(audit.Entry) {}))
			}
			app.Put("/nacos/v1/ns/instance/beat", func(c *fiber.Ctx) error { return c.SendString("ok") })
			app.Post("/nacos/v1/ns/instance", func(c *fiber.Ctx) error { return c.SendString("ok") })
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
