package httpapi

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/config"
)

// Secured is one @Secured annotation of Java Nacos 1.4.8: a fixed resource
// or a parser, and the action; extra adds nacosd's own checks of the objects
// a request really touches (ids, history rows, listened keys), closing the
// namespace escapes Java leaves open. Routes carry it (Route.Auth).
type Secured struct {
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

// Writes reports whether the check is for a write (or a node-only call).
func (s *Secured) Writes() bool { return s.action == auth.ActionWrite || s.node }

// ConfigObjects is what the extra checks read of the config store.
type ConfigObjects interface {
	InfoByID(id int64) *config.Info
	HistoryByNid(nid int64) *config.History
	HistoryPrevious(id int64) *config.History
	// WatchedBy is what a client IP listens to (group key → MD5).
	WatchedBy(ip string) map[string]string
}

// The @Secured specs of the routes (ConfigResourceParser,
// NamingResourceParser, fixed resources, node-only). Each call returns a
// fresh value.
func secConfig(action string) *Secured { return &Secured{action: action, parser: configResource} }
func secNaming(action string) *Secured { return &Secured{action: action, parser: namingResource} }
func secFixed(action, res string, admin bool) *Secured {
	return &Secured{action: action, resource: res, admin: admin}
}
func secNode() *Secured { return &Secured{node: true} }

func withExtra(s *Secured, f func(c *fiber.Ctx, p Params, cfg ConfigObjects) ([]check, error)) *Secured {
	s.extra = f
	return s
}

// Specs of nacosd's console extensions (server/console): the config search
// as /v1/cs/configs, the per-IP MD5s as the listener queries plus every
// key asked about, the event stream as the service it watches.
func SecuredConfigRead() *Secured { return secConfig(auth.ActionRead) }

// SecuredNamingRead is the naming read check (NamingResourceParser).
func SecuredNamingRead() *Secured { return secNaming(auth.ActionRead) }

// SecuredConsoleMD5 is the check of the console's MD5 query: read on every
// key it asks about.
func SecuredConsoleMD5() *Secured { return withExtra(secConfig(auth.ActionRead), consoleMD5Extra) }

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

// SecuredRoutes lists the "METHOD path" keys of the table's @Secured
// routes (paths below the context path; a trailing "*" stands for any
// rest) with whether the route writes: the attack suite sends each of
// them.
func (t *Table) SecuredRoutes() map[string]bool {
	out := map[string]bool{}
	for _, r := range t.routes {
		if r.Auth != nil && r.Method != MethodAll && r.Method != fiber.MethodHead {
			out[r.Method+" "+r.Path] = r.Auth.Writes()
		}
	}
	return out
}
