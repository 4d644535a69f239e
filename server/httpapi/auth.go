package httpapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/server/auth"
)

// MountAuth registers the login endpoints (UserController is mapped at both
// /v1/auth and /v1/auth/users; console-auth-core-v1.md §3.5).
func MountAuth(r fiber.Router, a *auth.Service) {
	login := func(c *fiber.Ctx) error {
		p := ParamsOf(c)
		user, err := p.SpringRequired("username")
		if err != nil {
			return err
		}
		pass, err := p.SpringRequired("password")
		if err != nil {
			return err
		}
		token := ""
		if h := string(c.Request().Header.Peek("Authorization")); strings.HasPrefix(h, "Bearer ") {
			token = h[len("Bearer "):]
		} else if v, ok := p.Raw("accessToken"); ok {
			token = v
		}
		res, err := a.Login(user, pass, token)
		if err != nil {
			return err
		}
		c.Set("Authorization", "Bearer "+res.Token)
		return SendJSON(c, res.JSON())
	}
	r.Post("/v1/auth/users/login", login)
	r.Post("/v1/auth/login", login)
}
