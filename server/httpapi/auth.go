package httpapi

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/auth"
)

type authHandlers struct{ a *auth.Service }

// AuthRoutes are /v1/auth: login, users (UserController is mapped at
// both /v1/auth and /v1/auth/users), roles and permissions
// (console-auth-core-v1.md §3.5, §3.9–§3.11), checked as ROLE_ADMIN with
// auth on or off.
func AuthRoutes(a *auth.Service) []Route {
	h := &authHandlers{a}
	admin := func(action, res string) *Secured { return secFixed(action, res, true) }
	var rs []Route
	for _, base := range []string{"/v1/auth", "/v1/auth/users"} {
		rs = append(rs,
			route(fiber.MethodPost, base+"/login", Local, nil, h.login),
			route(fiber.MethodGet, base, Read, admin(auth.ActionRead, "console/users"), h.listUsers),
			audited(route(fiber.MethodPost, base, CP, admin(auth.ActionWrite, "console/users"), h.createUser), "user.create", []string{"username"}, nil),
			audited(route(fiber.MethodDelete, base, CP, admin(auth.ActionWrite, "console/users"), h.deleteUser), "user.delete", []string{"username"}, nil),
			audited(route(fiber.MethodPut, base, CP, admin(auth.ActionWrite, "console/user/password"), h.updateUser), "user.update", []string{"username"}, nil),
			route(fiber.MethodGet, base+"/search", Read, admin(auth.ActionWrite, "console/users"), h.searchUsers),
			// deprecated, reads Spring Security's context, which the default
			// setup never fills: Java answers a NullPointerException
			audited(route(fiber.MethodPut, base+"/password", Local, nil, func(c *fiber.Ctx) error { return compat.ServerError("") }), "user.password", nil, nil),
		)
	}
	rs = append(rs,
		route(fiber.MethodGet, "/v1/auth/roles", Read, admin(auth.ActionRead, "console/roles"), h.listRoles),
		route(fiber.MethodGet, "/v1/auth/roles/search", Read, admin(auth.ActionRead, "console/roles"), h.searchRoles),
		audited(route(fiber.MethodPost, "/v1/auth/roles", CP, admin(auth.ActionWrite, "console/roles"), h.addRole), "role.add", []string{"role", "username"}, nil),
		audited(route(fiber.MethodDelete, "/v1/auth/roles", CP, admin(auth.ActionWrite, "console/roles"), h.deleteRole), "role.delete", []string{"role", "username"}, nil),
		route(fiber.MethodGet, "/v1/auth/permissions", Read, admin(auth.ActionRead, "console/permissions"), h.listPermissions),
		audited(route(fiber.MethodPost, "/v1/auth/permissions", CP, admin(auth.ActionWrite, "console/permissions"), h.addPermission), "permission.add", []string{"role", "resource", "action"}, nil),
		audited(route(fiber.MethodDelete, "/v1/auth/permissions", CP, admin(auth.ActionWrite, "console/permissions"), h.deletePermission), "permission.delete", []string{"role", "resource", "action"}, nil),
	)
	// any other method: Spring's HttpRequestMethodNotSupportedException
	// through ConsoleExceptionHandler
	for _, base := range []string{"/v1/auth", "/v1/auth/users"} {
		for _, p := range []string{"", "/login", "/search", "/password"} {
			rs = append(rs, route(MethodAll, base+p, Read, nil, methodNotSupported))
		}
	}
	for _, p := range []string{"/v1/auth/roles", "/v1/auth/roles/search", "/v1/auth/permissions"} {
		rs = append(rs, route(MethodAll, p, Read, nil, methodNotSupported))
	}
	return rs
}

// plain drops the /v1/cs content type of the shared Spring parameter
// helpers: console controllers answer text.
func plain(err error) error {
	var ce *compat.Error
	if errors.As(err, &ce) && ce.ContentType != "" {
		cp := *ce
		cp.ContentType = ""
		return &cp
	}
	return err
}

func required2(p Params, a, b string) (string, string, error) {
	x, err := p.SpringRequired(a)
	if err != nil {
		return "", "", err
	}
	y, err := p.SpringRequired(b)
	return x, y, err
}

func paging(p Params) (int, int, error) {
	no, err := springIntRequired(p, "pageNo")
	if err != nil {
		return 0, 0, plain(err)
	}
	size, err := springIntRequired(p, "pageSize")
	return no, size, plain(err)
}

func restOK(c *fiber.Ctx, msg string) error {
	w := compat.NewJSON(64)
	w.BeginObject().Key("code").Int(200).Key("message").Str(msg).Key("data").Null().EndObject()
	return SendJSON(c, w.Bytes())
}

func (h *authHandlers) login(c *fiber.Ctx) error {
	p := ParamsOf(c)
	if _, _, err := required2(p, "username", "password"); err != nil {
		return err
	}
	cr := credentialsOf(c, p)
	res, err := h.a.Login(cr)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderAuthorization, "Bearer "+res.Token)
	return SendJSON(c, res.JSON())
}

func (h *authHandlers) listUsers(c *fiber.Ctx) error {
	no, size, err := paging(ParamsOf(c))
	if err != nil {
		return err
	}
	pg, err := h.a.Users(no, size)
	if err != nil {
		return err
	}
	w := compat.NewJSON(128 + 48*len(pg.Items))
	compat.AppendPage(w, pg.TotalCount, pg.PageNumber, pg.PagesAvailable, len(pg.Items), func(w *compat.JSON, i int) {
		// the bcrypt hash Java lists is never handed out
		w.BeginObject().Key("username").Str(pg.Items[i].Username).Key("password").Null().EndObject()
	})
	return SendJSON(c, w.Bytes())
}

func (h *authHandlers) createUser(c *fiber.Ctx) error {
	user, pass, err := required2(ParamsOf(c), "username", "password")
	if err != nil {
		return err
	}
	if err := h.a.CreateUser(c.UserContext(), user, pass); err != nil {
		return err
	}
	return restOK(c, "create user ok!")
}

func (h *authHandlers) deleteUser(c *fiber.Ctx) error {
	user, err := ParamsOf(c).SpringRequired("username")
	if err != nil {
		return err
	}
	if err := h.a.DeleteUser(c.UserContext(), user); err != nil {
		return err
	}
	return restOK(c, "delete user ok!")
}

func (h *authHandlers) updateUser(c *fiber.Ctx) error {
	user, pass, err := required2(ParamsOf(c), "username", "newPassword")
	if err != nil {
		return err
	}
	caller, _ := PrincipalOf(c)
	if !h.a.Enabled() {
		caller.GlobalAdmin = true // Java: any caller with auth off
	}
	if err := h.a.UpdatePassword(c.UserContext(), caller, user, pass); errors.Is(err, auth.ErrNotSelf) {
		w := compat.NewJSON(64)
		w.BeginObject().Key("code").Int(403).Key("message").Str("authorization failed!").Key("data").Null().EndObject()
		return SendJSON(c, w.Bytes())
	} else if err != nil {
		return err
	}
	return restOK(c, "update user ok!")
}

func sendStrings(c *fiber.Ctx, list []string) error {
	w := compat.NewJSON(16 + 24*len(list))
	w.BeginArray()
	for _, s := range list {
		w.Str(s)
	}
	w.EndArray()
	return SendJSON(c, w.Bytes())
}

func (h *authHandlers) searchUsers(c *fiber.Ctx) error {
	user, err := ParamsOf(c).SpringRequired("username")
	if err != nil {
		return err
	}
	return sendStrings(c, h.a.SearchUsers(user))
}

func (h *authHandlers) listRoles(c *fiber.Ctx) error {
	p := ParamsOf(c)
	no, size, err := paging(p)
	if err != nil {
		return err
	}
	pg, err := h.a.Roles(p.Spring("username", ""), no, size)
	if err != nil {
		return err
	}
	w := compat.NewJSON(128 + 48*len(pg.Items))
	compat.AppendPage(w, pg.TotalCount, pg.PageNumber, pg.PagesAvailable, len(pg.Items), func(w *compat.JSON, i int) {
		w.BeginObject().Key("role").Str(pg.Items[i].Role).Key("username").Str(pg.Items[i].Username).EndObject()
	})
	return SendJSON(c, w.Bytes())
}

func (h *authHandlers) searchRoles(c *fiber.Ctx) error {
	role, err := ParamsOf(c).SpringRequired("role")
	if err != nil {
		return err
	}
	return sendStrings(c, h.a.SearchRoles(role))
}

func (h *authHandlers) addRole(c *fiber.Ctx) error {
	role, user, err := required2(ParamsOf(c), "role", "username")
	if err != nil {
		return err
	}
	if err := h.a.AddRole(c.UserContext(), role, user); err != nil {
		return err
	}
	return restOK(c, "add role ok!")
}

func (h *authHandlers) deleteRole(c *fiber.Ctx) error {
	p := ParamsOf(c)
	role, err := p.SpringRequired("role")
	if err != nil {
		return err
	}
	user := p.Spring("username", "")
	if err := h.a.DeleteRole(c.UserContext(), role, user); err != nil {
		return err
	}
	return restOK(c, "delete role of user "+user+" ok!")
}

func (h *authHandlers) listPermissions(c *fiber.Ctx) error {
	p := ParamsOf(c)
	no, size, err := paging(p)
	if err != nil {
		return err
	}
	pg, err := h.a.Permissions(p.Spring("role", ""), no, size)
	if err != nil {
		return err
	}
	w := compat.NewJSON(128 + 64*len(pg.Items))
	compat.AppendPage(w, pg.TotalCount, pg.PageNumber, pg.PagesAvailable, len(pg.Items), func(w *compat.JSON, i int) {
		it := pg.Items[i]
		w.BeginObject().Key("role").Str(it.Role).Key("resource").Str(it.Resource).Key("action").Str(it.Action).EndObject()
	})
	return SendJSON(c, w.Bytes())
}

func permParams(p Params) (string, string, string, error) {
	role, res, err := required2(p, "role", "resource")
	if err != nil {
		return "", "", "", err
	}
	action, err := p.SpringRequired("action")
	return role, res, action, err
}

func (h *authHandlers) addPermission(c *fiber.Ctx) error {
	role, res, action, err := permParams(ParamsOf(c))
	if err != nil {
		return err
	}
	if err := h.a.AddPermission(c.UserContext(), role, res, action); err != nil {
		return err
	}
	return restOK(c, "add permission ok!")
}

func (h *authHandlers) deletePermission(c *fiber.Ctx) error {
	role, res, action, err := permParams(ParamsOf(c))
	if err != nil {
		return err
	}
	if err := h.a.DeletePermission(c.UserContext(), role, res, action); err != nil {
		return err
	}
	return restOK(c, "delete permission ok!")
}
