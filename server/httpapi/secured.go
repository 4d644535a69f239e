package httpapi

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/config"
)

// secured is one @Secured annotation of Java Nacos 1.4.8: a fixed resource
// or a parser, and the action; extra adds nacosd's own checks of the objects
// a request really touches (ids, history rows, listened keys), closing the
// namespace escapes Java leaves open.
type secured struct {
	action   string
	resource string
	parser   func(p Params) (string, error)
	extra    func(c *fiber.Ctx, p Params, cfg ConfigObjects) ([]check, error)
	// admin: also checked with auth off (users, roles, permissions).
	admin bool
	// node: node-to-node or operations endpoint (Java: open); with auth on
	// only another node (server identity) or an admin may call it.
	node bool
}

// ConfigObjects is what the extra checks read of the config store.
type ConfigObjects interface {
	InfoByID(id int64) *config.Info
	HistoryByNid(nid int64) *config.History
	HistoryPrevious(id int64) *config.History
	// WatchedBy is what a client IP listens to (group key → MD5).
	WatchedBy(ip string) map[string]string
}

// securedRoutes is the @Secured table: "METHOD path" (path below the
// context path) -> check. HEAD is checked as GET (Java's
// ControllerMethodsCache knows no HEAD key, so there a HEAD passes
// unchecked to the GET handler).
func securedRoutes() map[string]secured {
	cfgR := secured{action: auth.ActionRead, parser: configResource}
	cfgW := secured{action: auth.ActionWrite, parser: configResource}
	nsR := secured{action: auth.ActionRead, parser: namingResource}
	nsW := secured{action: auth.ActionWrite, parser: namingResource}
	fixed := func(action, res string, admin bool) secured {
		return secured{action: action, resource: res, admin: admin}
	}
	node := secured{node: true}
	m := map[string]secured{
		"GET /v1/cs/configs":             withExtra(cfgR, configReadExtra),
		"POST /v1/cs/configs":            withExtra(cfgW, configWriteExtra),
		"DELETE /v1/cs/configs":          withExtra(cfgW, configDeleteExtra),
		"GET /v1/cs/configs/catalog":     cfgR,
		"POST /v1/cs/configs/listener":   withExtra(cfgR, listenerExtra),
		"GET /v1/cs/configs/listener":    cfgR,
		"GET /v1/cs/history":             withExtra(cfgR, historyExtra),
		"GET /v1/cs/history/previous":    withExtra(cfgR, historyPreviousExtra),
		"GET /v1/cs/ops/derby":           fixed(auth.ActionRead, "nacos/admin", false),
		"POST /v1/cs/ops/data/removal":   fixed(auth.ActionWrite, "nacos/admin", false),
		"POST /v1/core/ops/raft":         fixed(auth.ActionWrite, "nacos/admin", false),
		"POST /v1/console/namespaces":    fixed(auth.ActionWrite, "console/namespaces", false),
		"PUT /v1/console/namespaces":     fixed(auth.ActionWrite, "console/namespaces", false),
		"DELETE /v1/console/namespaces":  fixed(auth.ActionWrite, "console/namespaces", false),
		"GET /v1/auth/roles":             fixed(auth.ActionRead, "console/roles", true),
		"GET /v1/auth/roles/search":      fixed(auth.ActionRead, "console/roles", true),
		"POST /v1/auth/roles":            fixed(auth.ActionWrite, "console/roles", true),
		"DELETE /v1/auth/roles":          fixed(auth.ActionWrite, "console/roles", true),
		"GET /v1/auth/permissions":       fixed(auth.ActionRead, "console/permissions", true),
		"POST /v1/auth/permissions":      fixed(auth.ActionWrite, "console/permissions", true),
		"DELETE /v1/auth/permissions":    fixed(auth.ActionWrite, "console/permissions", true),
		"PUT /v1/ns/cluster":             nsW,
		"PUT /v1/ns/health":              {action: auth.ActionWrite}, // DefaultResourceParser: "resource name invalid!"
		"PUT /v1/ns/health/instance":     {action: auth.ActionWrite},
		"POST /v1/ns/service":            nsW,
		"DELETE /v1/ns/service":          nsW,
		"GET /v1/ns/service":             nsR,
		"PUT /v1/ns/service":             nsW,
		"GET /v1/ns/service/list":        nsR,
		"GET /v1/ns/service/names":       nsR,
		"GET /v1/ns/service/subscribers": nsR,
		"GET /v1/ns/catalog/service":     nsR,
		"GET /v1/ns/catalog/instances":   nsR,
		"GET /v1/ns/catalog/services":    nsR,
		// nacosd's console extensions (server/console): the config search
		// as /v1/cs/configs, the per-IP MD5s as the listener queries plus
		// every key asked about, the event stream as the service it watches.
		// ui/info is open (it says whether to log in), cluster/nodes too, as
		// /v1/core/cluster/nodes is in Java.
		"GET /v1/console/configs":      cfgR,
		"POST /v1/console/configs/md5": withExtra(cfgR, consoleMD5Extra),
		"GET /v1/console/events":       nsR,

		// Legacy and status endpoints Java leaves open (issue 26 item 8):
		// with auth on each needs what its modern counterpart needs. The
		// old /api beat and list take a bare name (dom) in DEFAULT_GROUP;
		// allDomNames lists every namespace's services; /v1/cs/listener what
		// a client IP listens to (every key it lists is checked);
		// catalog/rt and distro/server name one service; push/state lists
		// the failed pushes of every namespace and resets the counters.
		"GET /v1/ns/api/clientBeat":         {action: auth.ActionWrite, parser: legacyNamingResource},
		"GET /v1/ns/api/srvIPXT":            {action: auth.ActionRead, parser: legacyNamingResource},
		"GET /v1/ns/api/allDomNames":        fixed(auth.ActionRead, "*:*:naming/*", false),
		"GET /v1/cs/listener":               withExtra(cfgR, listenerByIPExtra),
		"GET /v1/ns/catalog/rt/service":     nsR,
		"GET /v1/ns/operator/distro/server": nsR,
		"GET /v1/ns/ops/distro/server":      nsR,
		"GET /v1/ns/operator/push/state":    node,
		"GET /v1/ns/ops/push/state":         node,

		"POST /v1/core/cluster/report":            node,
		"POST /v1/core/cluster/server/leave":      node,
		"POST /v1/core/cluster/switch/lookup":     node,
		"PUT /v1/core/ops/log":                    node,
		"GET /v1/cs/communication/dataChange":     node,
		"GET /v1/cs/communication/configWatchers": node,
		"GET /v1/cs/communication/watcherConfigs": node,
		"POST /v1/cs/ops/localCache":              node,
		"PUT /v1/cs/ops/log":                      node,
		"PUT /v1/ns/service/checksum":             node,
		"POST /v1/ns/service/status":              node,
		"GET /v1/ns/instance/statuses":            node,
		"GET /v1/ns/api/statuses":                 node,
		"GET /v1/ns/operator/server/status":       node,
		"GET /v1/ns/ops/server/status":            node,
		"PUT /v1/ns/operator/log":                 node,
		"PUT /v1/ns/ops/log":                      node,
	}
	// nacosd's migration endpoints (migrate.go): ROLE_ADMIN only, auth on or off
	m["POST /v1/nacosd/migrate/config"] = fixed(auth.ActionWrite, "console/migrate", true)
	m["POST /v1/nacosd/migrate/user"] = fixed(auth.ActionWrite, "console/migrate", true)
	m["POST /v1/nacosd/migrate/role"] = fixed(auth.ActionWrite, "console/migrate", true)
	for _, base := range []string{"/v1/auth", "/v1/auth/users"} {
		m["POST "+base] = fixed(auth.ActionWrite, "console/users", true)
		m["DELETE "+base] = fixed(auth.ActionWrite, "console/users", true)
		m["PUT "+base] = fixed(auth.ActionWrite, "console/user/password", true)
		m["GET "+base] = fixed(auth.ActionRead, "console/users", true)
		m["GET "+base+"/search"] = fixed(auth.ActionWrite, "console/users", true)
	}
	for _, base := range []string{"/v1/ns/instance", "/v1/ns/api"} {
		for _, k := range []string{"POST ", "DELETE ", "PUT ", "PATCH "} {
			m[k+base] = nsW
		}
		m["PUT "+base+"/metadata/batch"] = nsW
		m["DELETE "+base+"/metadata/batch"] = nsW
		m["PUT "+base+"/beat"] = nsW
		m["GET "+base+"/list"] = nsR
		m["GET "+base] = nsR
	}
	for _, base := range []string{"/v1/ns/operator", "/v1/ns/ops"} {
		m["PUT "+base+"/switches"] = fixed(auth.ActionWrite, "naming/switches", false)
	}
	for _, p := range []string{"/v1/ns/distro/", "/v1/ns/raft/"} {
		for _, mth := range []string{"GET ", "PUT ", "POST ", "DELETE "} {
			m[mth+p+"*"] = node
		}
	}
	return m
}

func withExtra(s secured, f func(c *fiber.Ctx, p Params, cfg ConfigObjects) ([]check, error)) secured {
	s.extra = f
	return s
}

// processNamespace is NamespaceUtil.processNamespaceParameter.
func processNamespace(v string, present bool) string {
	if !present || compat.JavaIsBlank(v) || compat.JavaEqualsIgnoreCase(v, "public") || compat.JavaEqualsIgnoreCase(v, "null") {
		return ""
	}
	return compat.JavaTrim(v)
}

// configResource is ConfigResourceParser: ns:group:config/dataId, or
// ns:*:config/* without a dataId; a missing group is the literal "null".
func configResource(p Params) (string, error) {
	tenant, ok := p.Raw("tenant")
	return configResourceOf(processNamespace(tenant, ok), p), nil
}

func configResourceOf(ns string, p Params) string {
	dataID, _ := p.Raw("dataId")
	if compat.JavaIsBlank(dataID) {
		return ns + ":*:config/*"
	}
	group, ok := p.Raw("group")
	if !ok {
		group = "null"
	}
	return ns + ":" + group + ":config/" + dataID
}

func configObject(tenant, group, dataID string) string {
	return tenant + ":" + group + ":config/" + dataID
}

// namingResource is NamingResourceParser: ns:group:naming/service, or
// ns:*:naming/* without a service name — built from the service the
// handlers reach, not only from what Java's parser reads: a name
// "G2@@svc" is in group G2 whatever groupName says (Java checks groupName,
// so serviceName=G2@@svc&groupName=G1 reached G2 with rights on G1), the
// name is trimmed as the handlers trim it, and dom stands for a blank
// serviceName as in the handlers.
func namingResource(p Params) (string, error) {
	nsv, ok := p.Raw("namespaceId")
	ns := processNamespace(nsv, ok)
	svc, hasSvc := p.Raw("serviceName")
	if !hasSvc || compat.JavaIsBlank(svc) {
		if d, okd := p.Raw("dom"); okd {
			svc, hasSvc = d, true
		}
	}
	svc = compat.JavaTrim(svc)
	group, _ := p.Raw("groupName")
	blankGroup := compat.JavaIsBlank(group)
	if blankGroup { // Java's order of the parser's failures
		var err error
		if group, err = namingGroupOf(svc, hasSvc); err != nil {
			return "", err
		}
	}
	name, err := namingServiceOf(svc, hasSvc)
	if err != nil {
		return "", err
	}
	if !blankGroup && strings.Contains(svc, "@@") {
		group, _ = namingGroupOf(svc, hasSvc) // the group the name reaches
	}
	if compat.JavaIsBlank(name) {
		return ns + ":*:naming/*", nil
	}
	return ns + ":" + group + ":naming/" + name, nil
}

// legacyNamingResource is the resource of /v1/ns/api/clientBeat and srvIPXT:
// their handlers reach the bare name dom in DEFAULT_GROUP (whatever
// serviceName, groupName or an "@@" in dom say).
func legacyNamingResource(p Params) (string, error) {
	nsv, ok := p.Raw("namespaceId")
	ns := processNamespace(nsv, ok)
	dom, ok := p.Raw("dom")
	if !ok || compat.JavaIsBlank(dom) {
		return ns + ":*:naming/*", nil // the handler refuses it
	}
	return ns + ":DEFAULT_GROUP:naming/" + compat.JavaTrim(dom), nil
}

func namingGroupOf(svc string, present bool) (string, error) {
	switch {
	case !present || compat.JavaIsBlank(svc):
		return "", nil
	case !strings.Contains(svc, "@@"):
		return "DEFAULT_GROUP", nil
	}
	parts := compat.JavaSplit(svc, "@@")
	if len(parts) == 0 {
		return "", errIndex(0, 0)
	}
	return parts[0], nil
}

// namingServiceOf is the service part of a name: Java's parser takes the
// second "@@" field; the handlers keep everything after the first "@@"
// (a name "G@@svc@@x" is service "svc@@x" of group G), which is what is
// checked.
func namingServiceOf(svc string, present bool) (string, error) {
	switch {
	case !present || compat.JavaIsBlank(svc):
		return "", nil
	case !strings.Contains(svc, "@@"):
		return svc, nil
	}
	parts := compat.JavaSplit(svc, "@@")
	if len(parts) < 2 {
		return "", errIndex(1, len(parts))
	}
	_, rest, _ := strings.Cut(svc, "@@")
	return rest, nil
}

// errIndex is the ArrayIndexOutOfBoundsException a service name like
// "g@@" causes in Java's parser: AuthFilter answers 500 "Server failed,...".
func errIndex(i, n int) error {
	return &compat.Error{Status: 500, Body: "Server failed,Index " + strconv.Itoa(i) + " out of bounds for length " + strconv.Itoa(n)}
}

// SecuredRoutes lists the "METHOD path" keys of the @Secured table (paths
// below the context path; a trailing "*" stands for any rest) with whether
// the route writes: the attack suite sends each of them.
func SecuredRoutes() map[string]bool {
	out := map[string]bool{}
	for k, s := range securedRoutes() {
		out[k] = s.action == auth.ActionWrite || s.node
	}
	return out
}
