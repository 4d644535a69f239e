package httpapi

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/config"
)

// ConfigImporter writes the config records of a Java Nacos
// (config.Service.Import).
type ConfigImporter interface {
	Import(ctx context.Context, sets []config.ImportSet, dryRun bool) ([]config.ImportResult, error)
}

// UserImporter writes a user with its bcrypt hash and role bindings
// (auth.Service.ImportUser, ImportRole).
type UserImporter interface {
	ImportUser(ctx context.Context, username, hash string, dryRun bool) (string, error)
	ImportRole(ctx context.Context, role, username string, dryRun bool) (string, error)
}

// MigrateRoutes are nacosd's own migration endpoints, the part of a
// Java Nacos that its HTTP API cannot write (times, ids and history of
// configs, bcrypt hashes of users). `nacosd migrate` is their client; the
// @Secured table admits only ROLE_ADMIN, with auth on or off. Both take
// ?dryRun=true to report without writing.
//
//	POST <context>/v1/nacosd/migrate/config  body: {"sets":[config.ImportSet…]} → {"results":[config.ImportResult…]}
//	POST <context>/v1/nacosd/migrate/user    body: {"username","password"} → {"outcome"}
//	POST <context>/v1/nacosd/migrate/role    body: {"role","username"} → {"outcome"} (ROLE_ADMIN too)
func MigrateRoutes(cfg ConfigImporter, users UserImporter) []Route {
	h := &migrateHandlers{cfg: cfg, users: users}
	admin := func() *Secured { return secFixed(auth.ActionWrite, "console/migrate", true) }
	return withHead([]Route{
		audited(route(fiber.MethodPost, "/v1/nacosd/migrate/config", CP, admin(), h.config), "migrate.config", []string{"dryRun"}, nil),
		audited(route(fiber.MethodPost, "/v1/nacosd/migrate/user", CP, admin(), h.user), "migrate.user", []string{"dryRun"}, nil),
		audited(route(fiber.MethodPost, "/v1/nacosd/migrate/role", CP, admin(), h.role), "migrate.role", []string{"dryRun"}, nil),
	}, methodNotSupported)
}

type migrateHandlers struct {
	cfg   ConfigImporter
	users UserImporter
}

func decodeJSONBody(c *fiber.Ctx, v any) error {
	dec := json.NewDecoder(bytes.NewReader(c.Body()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return compat.IllegalArgument("import: body: " + err.Error())
	}
	return nil
}

func (h *migrateHandlers) config(c *fiber.Ctx) error {
	var req struct {
		Sets []config.ImportSet `json:"sets"`
	}
	if err := decodeJSONBody(c, &req); err != nil {
		return err
	}
	res, err := h.cfg.Import(c.UserContext(), req.Sets, c.Query("dryRun") == "true")
	if err != nil {
		return err
	}
	out, _ := json.Marshal(map[string]any{"results": res})
	return SendJSON(c, out)
}

func (h *migrateHandlers) user(c *fiber.Ctx) error {
	var u struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	if err := decodeJSONBody(c, &u); err != nil {
		return err
	}
	o, err := h.users.ImportUser(c.UserContext(), u.Username, u.Password, c.Query("dryRun") == "true")
	if err != nil {
		return err
	}
	out, _ := json.Marshal(map[string]string{"outcome": o})
	return SendJSON(c, out)
}

func (h *migrateHandlers) role(c *fiber.Ctx) error {
	var r struct {
		Role     string `json:"role"`
		Username string `json:"username"`
	}
	if err := decodeJSONBody(c, &r); err != nil {
		return err
	}
	o, err := h.users.ImportRole(c.UserContext(), r.Role, r.Username, c.Query("dryRun") == "true")
	if err != nil {
		return err
	}
	out, _ := json.Marshal(map[string]string{"outcome": o})
	return SendJSON(c, out)
}
