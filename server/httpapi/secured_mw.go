package httpapi

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/auth"
)

// principalKey holds the auth.Principal of a checked request in c.Locals.
const principalKey = "nacosd.auth.principal"

// PrincipalOf returns the caller a secured route authenticated.
func PrincipalOf(c *fiber.Ctx) (auth.Principal, bool) {
	p, ok := c.Locals(principalKey).(auth.Principal)
	return p, ok
}

// appendRouteKey appends "METHOD path" below the context path to dst, with
// the path the router matches: the raw request path without trailing
// slashes.
func appendRouteKey(dst []byte, c *fiber.Ctx, contextPath string) ([]byte, bool) {
	path := c.Path()
	for len(path) > 1 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	if contextPath != "" {
		if !strings.HasPrefix(path, contextPath) || len(path) > len(contextPath) && path[len(contextPath)] != '/' {
			return dst, false
		}
		path = path[len(contextPath):]
	}
	m := c.Method()
	if m == fiber.MethodHead {
		m = fiber.MethodGet
	}
	dst = append(dst, m...)
	dst = append(dst, ' ')
	return append(dst, path...), true
}

// credentialsOf is NacosAuthManager.resolveToken's input.
func credentialsOf(c *fiber.Ctx, p Params) auth.Credentials {
	cr := auth.Credentials{Source: c.Context().RemoteIP().String()}
	if h := string(c.Request().Header.Peek(fiber.HeaderAuthorization)); !compat.JavaIsBlank(h) && strings.HasPrefix(h, "Bearer ") {
		cr.Bearer = h[len("Bearer "):]
	}
	if v, ok := p.Raw("accessToken"); ok && !compat.JavaIsBlank(v) {
		cr.AccessToken = v
	}
	cr.Username, _ = p.Raw("username")
	cr.Password, _ = p.Raw("password")
	return cr
}

// deny answers as AuthFilter's response.sendError does: Spring's /error
// JSON with the status and message (403 for AccessException, 500
// "Server failed,..." for a parser exception); 429 with Retry-After while
// locked out.
func deny(c *fiber.Ctx, err error) error {
	var le *auth.LockedError
	if errors.As(err, &le) {
		c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(int64(le.RetryAfter.Seconds()+0.999), 10))
	}
	var ce *compat.Error
	if errors.As(err, &ce) {
		return SendSpringError(c, ce.Status, ce.Body)
	}
	return SendSpringError(c, fiber.StatusForbidden, err.Error())
}

type check struct{ resource, action string }

func reads(rs ...string) []check {
	out := make([]check, len(rs))
	for i, r := range rs {
		out[i] = check{r, auth.ActionRead}
	}
	return out
}

// idList reads a comma-separated id list leniently (the handler reports
// malformed lists); at most 10 000 ids are looked at.
func idList(p Params, name string) []int64 {
	v, ok := p.Raw(name)
	if !ok {
		return nil
	}
	var ids []int64
	for _, f := range strings.Split(v, ",") {
		if n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64); err == nil {
			ids = append(ids, n)
		}
		if len(ids) >= 10_000 {
			break
		}
	}
	return ids
}

func infoChecks(objs ConfigObjects, ids []int64, action string) []check {
	var out []check
	for _, id := range ids {
		if in := objs.InfoByID(id); in != nil {
			out = append(out, check{configObject(in.Tenant, in.Group, in.DataID), action})
		}
	}
	return out
}

// configReadExtra: export by ids reads exactly those configs, whatever
// tenant the request names.
func configReadExtra(_ *fiber.Ctx, p Params, objs ConfigObjects) ([]check, error) {
	if param(p, "export", "true") || param(p, "exportV2", "true") {
		return infoChecks(objs, idList(p, "ids"), auth.ActionRead), nil
	}
	return nil, nil
}

// configWriteExtra: import writes into the namespace parameter (Java
// checks the absent tenant, i.e. public); clone reads its source configs by
// id and writes them into tenant.
func configWriteExtra(c *fiber.Ctx, p Params, objs ConfigObjects) ([]check, error) {
	switch {
	case param(p, "import", "true"):
		v, ok := p.Raw("namespace")
		return []check{{processNamespace(v, ok) + ":*:config/*", auth.ActionWrite}}, nil
	case param(p, "clone", "true"):
		var items []*cloneBean // as the handler reads it
		if json.Unmarshal(c.Body(), &items) != nil {
			return nil, nil // the handler answers the malformed body
		}
		tenant, ok := p.Raw("tenant")
		ns := processNamespace(tenant, ok)
		var out []check
		for _, it := range items {
			if it == nil || !it.CfgID.set {
				continue
			}
			in := objs.InfoByID(it.CfgID.n)
			if in == nil {
				continue
			}
			out = append(out, check{configObject(in.Tenant, in.Group, in.DataID), auth.ActionRead})
			dataID, group := in.DataID, in.Group
			if it.DataID != nil && !compat.JavaIsBlank(*it.DataID) {
				dataID = *it.DataID
			}
			if it.Group != nil && !compat.JavaIsBlank(*it.Group) {
				group = *it.Group
			}
			out = append(out, check{configObject(ns, group, dataID), auth.ActionWrite})
		}
		return out, nil
	}
	return nil, nil
}

// configDeleteExtra: delete by ids deletes exactly those configs.
func configDeleteExtra(_ *fiber.Ctx, p Params, objs ConfigObjects) ([]check, error) {
	if param(p, "delType", "ids") {
		return infoChecks(objs, idList(p, "ids"), auth.ActionWrite), nil
	}
	return nil, nil
}

// listenerExtra: every listened key must be readable (Java checks only
// ns:*:config/* of the absent tenant parameter).
func listenerExtra(_ *fiber.Ctx, p Params, _ ConfigObjects) ([]check, error) {
	v, ok := p.Raw("Listening-Configs")
	if !ok {
		return nil, nil
	}
	entries, err := compat.ParseListeningConfigs(v)
	if err != nil {
		return nil, nil // the handler answers it
	}
	out := make([]check, 0, len(entries))
	for _, e := range entries {
		out = append(out, check{configObject(e.Tenant, e.Group, e.DataID), auth.ActionRead})
	}
	return out, nil
}

// historyExtra: a history row by nid is read from the namespace it
// belongs to, not the one the request names.
func historyExtra(_ *fiber.Ctx, p Params, objs ConfigObjects) ([]check, error) {
	if param(p, "search", "accurate") {
		return nil, nil
	}
	ids := idList(p, "nid")
	if len(ids) != 1 {
		return nil, nil
	}
	if h := objs.HistoryByNid(ids[0]); h != nil {
		return reads(configObject(h.Tenant, h.Group, h.DataID)), nil
	}
	return nil, nil
}

func historyPreviousExtra(_ *fiber.Ctx, p Params, objs ConfigObjects) ([]check, error) {
	ids := idList(p, "id")
	if len(ids) != 1 {
		return nil, nil
	}
	if h := objs.HistoryPrevious(ids[0]); h != nil {
		return reads(configObject(h.Tenant, h.Group, h.DataID)), nil
	}
	return nil, nil
}

// consoleMD5Extra: POST /v1/console/configs/md5 reads the MD5 of every key
// in its body (a JSON array of {"groupKey","ip"}), whatever tenant the
// request names; at most 10 000 keys are looked at (the handler refuses
// more).
func consoleMD5Extra(c *fiber.Ctx, _ Params, _ ConfigObjects) ([]check, error) {
	var items []struct {
		GroupKey string `json:"groupKey"`
	}
	if json.Unmarshal(c.Body(), &items) != nil {
		return nil, nil // the handler answers the malformed body
	}
	var out []check
	for i, it := range items {
		if i >= 10_000 {
			break
		}
		dataID, group, tenant, err := compat.ParseGroupKey(it.GroupKey)
		if err != nil {
			continue // the handler refuses it
		}
		out = append(out, check{configObject(tenant, group, dataID), auth.ActionRead})
	}
	return out, nil
}

// listenerByIPExtra: GET /v1/cs/listener lists what a client IP listens to
// (matched on its tenant with Java's key.contains, or every namespace with
// all=true): each key it would list must be readable.
func listenerByIPExtra(_ *fiber.Ctx, p Params, objs ConfigObjects) ([]check, error) {
	ip, ok := p.Raw("ip")
	if !ok || ip == "" {
		return nil, nil // the handler refuses it
	}
	var out []check
	for k := range watchedListed(objs.WatchedBy(ip), p) {
		if dataID, group, tenant, err := compat.ParseGroupKey(k); err == nil {
			out = append(out, check{configObject(tenant, group, dataID), auth.ActionRead})
		}
	}
	return out, nil
}
