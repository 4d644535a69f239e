package httpapi

import (
	"bytes"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/nacosd/nacosd/compat"
)

// ActuatorDeps are the Spring Boot actuator endpoints a node exposes
// (management.endpoints.web.exposure.*; Spring Boot's default exposes
// only health).
type ActuatorDeps struct {
	// Health reports the health status: nil error UP, else DOWN (503).
	// Nil: /actuator/health is not exposed.
	Health func() error
	// Prometheus is gathered by /actuator/prometheus; nil: not exposed
	// (404, as Java without the exposure property).
	Prometheus prometheus.Gatherer
}

// Actuator content types (Spring Boot 2.7's ApiVersion).
const (
	actuatorV3   = "application/vnd.spring-boot.actuator.v3+json"
	actuatorV2   = "application/vnd.spring-boot.actuator.v2+json"
	promText     = "text/plain;version=0.0.4;charset=utf-8"
	promOpenMetr = "application/openmetrics-text;version=1.0.0;charset=utf-8"
)

// ActuatorRoutes are <context>/actuator (the links), /actuator/health and
// /actuator/prometheus as Spring Boot 2.7 answers them in Java Nacos
// 1.4.8. Java lists /actuator/** in nacos.security.ignore.urls: none of
// them is secured.
func ActuatorRoutes(d ActuatorDeps) []Route {
	h := &actuatorHandlers{d: d}
	type rt struct {
		path string
		fn   fiber.Handler
	}
	routes := []rt{{"/actuator", h.links}}
	if d.Health != nil {
		routes = append(routes, rt{"/actuator/health", h.health}, rt{"/actuator/health/*", h.healthComponent})
	}
	if d.Prometheus != nil {
		routes = append(routes, rt{"/actuator/prometheus", h.prometheus})
	}
	var out []Route
	for _, r := range routes {
		out = append(out, withHead([]Route{route(fiber.MethodGet, r.path, Read, nil, r.fn)}, methodNotSupported)...)
	}
	return out
}

type actuatorHandlers struct{ d ActuatorDeps }

// negotiateActuator picks the JSON type Spring's actuator produces for the
// Accept header: v3 for none or a wildcard, else the first listed type it
// knows; no match is HttpMediaTypeNotAcceptableException through
// ConsoleExceptionHandler.
func negotiateActuator(accept string) (string, error) {
	if strings.TrimSpace(accept) == "" {
		return actuatorV3, nil
	}
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(part, ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "*/*", "application/*", actuatorV3:
			return actuatorV3, nil
		case actuatorV2:
			return actuatorV2, nil
		case "application/json":
			return "application/json", nil
		}
	}
	e := compat.ServerError("Could not find acceptable representation")
	e.Exception = "HttpMediaTypeNotAcceptableException"
	return "", e
}

func (h *actuatorHandlers) health(c *fiber.Ctx) error {
	ct, err := negotiateActuator(c.Get(fiber.HeaderAccept))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, ct)
	if err := h.d.Health(); err != nil {
		return c.Status(fiber.StatusServiceUnavailable).SendString(`{"status":"DOWN"}`)
	}
	return c.SendString(`{"status":"UP"}`)
}

// healthComponent is /actuator/health/{*path}: Java Nacos shows no
// components, so every one is an empty 404.
func (h *actuatorHandlers) healthComponent(c *fiber.Ctx) error {
	c.Response().Header.SetNoDefaultContentType(true)
	c.Status(fiber.StatusNotFound)
	return nil
}

// links is the actuator discovery page: self and each exposed endpoint.
func (h *actuatorHandlers) links(c *fiber.Ctx) error {
	ct, err := negotiateActuator(c.Get(fiber.HeaderAccept))
	if err != nil {
		return err
	}
	base := c.Protocol() + "://" + string(c.Request().Host()) + strings.TrimSuffix(string(c.Request().URI().Path()), "/")
	w := compat.NewJSON(256)
	link := func(name, href string, templated bool) {
		w.Key(name).BeginObject().Key("href").Str(href).Key("templated").Bool(templated).EndObject()
	}
	w.BeginObject().Key("_links").BeginObject()
	link("self", base, false)
	if h.d.Health != nil {
		link("health-path", base+"/health/{*path}", true)
		link("health", base+"/health", false)
	}
	if h.d.Prometheus != nil {
		link("prometheus", base+"/prometheus", false)
	}
	w.EndObject().EndObject()
	c.Set(fiber.HeaderContentType, ct)
	return c.Send(w.Bytes())
}

// prometheus writes the registry in the text format 0.0.4, or OpenMetrics
// 1.0.0 when the scraper asks for it, with Micrometer's content types.
func (h *actuatorHandlers) prometheus(c *fiber.Ctx) error {
	mfs, err := h.d.Prometheus.Gather()
	if err != nil && len(mfs) == 0 {
		return compat.ServerError("metrics: " + err.Error())
	}
	format, ct := expfmt.NewFormat(expfmt.TypeTextPlain), promText
	if strings.Contains(c.Get(fiber.HeaderAccept), "application/openmetrics-text") {
		format, ct = expfmt.NewFormat(expfmt.TypeOpenMetrics), promOpenMetr
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return compat.ServerError("metrics: " + err.Error())
		}
	}
	if cl, ok := enc.(expfmt.Closer); ok {
		if err := cl.Close(); err != nil {
			return compat.ServerError("metrics: " + err.Error())
		}
	}
	c.Set(fiber.HeaderContentType, ct)
	return c.Send(buf.Bytes())
}
