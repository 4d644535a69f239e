package httpapi

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Class is what a request does to the cluster's state. The gate (gate.go)
// reads it before the handler runs and sends the request where it can be
// decided, as rqlite's proxy does: a handler never runs a write on a node
// that cannot decide it, and no handler can hide a write from the
// forwarding by mapping an error.
type Class uint8

// Classes of routes.
const (
	// Read serves this node's state (reads are local, as in Java).
	Read Class = iota
	// Local acts on this node only: node-to-node protocol, operations,
	// login.
	Local
	// AP writes ephemeral naming data (Java's @CanDistro): it runs on the
	// service's Distro owner, to which any other member proxies it.
	AP
	// CP writes raft state (configs, namespaces, users, persistent
	// instances, service metadata, switches): it runs on the raft leader.
	// A follower forwards it before its handler runs and answers once it
	// applied the leader's write itself.
	CP
	// Mixed is an AP and a CP write in one request (a metadata batch over
	// ephemeral and persistent instances): the service's Distro owner runs
	// it, after the raft leader ran its persistent part (Part).
	Mixed
)

var classNames = [...]string{Read: "read", Local: "local", AP: "ap-write", CP: "cp-write", Mixed: "mixed-write"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// MethodAll routes every method that no earlier route of the path took
// (Spring's "Request method 'X' not supported", Java's "no such api").
const MethodAll = "ALL"

// Route is one entry of the route table: the one place that says what a
// path serves, who may call it and what it writes.
type Route struct {
	Method string // fiber.MethodGet, …, or MethodAll
	// Path is below the context path; a trailing "/*" matches any rest.
	Path  string
	Class Class
	// ClassOf, when set, decides the class per request (an instance
	// write is CP when the instance is persistent); Class is then what
	// the route inventory shows.
	ClassOf func(c *fiber.Ctx) Class
	// Auth is the route's @Secured check; nil: not secured.
	Auth *Secured
	// Filter, when set, runs before the @Secured check and the routing of
	// writes (naming's TrafficReviseFilter); done says it answered.
	Filter  func(c *fiber.Ctx) (done bool, err error)
	Handler fiber.Handler
	// Unserved marks a path nacosd does not serve whose @Secured check
	// Java runs: checked, then answered as an unknown path.
	Unserved bool
	// Idempotent says running the write twice leaves and answers what
	// running it once does (IdempotentOf, when set, decides per request):
	// a write whose outcome is unknown after the raft leader died with it
	// is then sent to the next leader (server/leader).
	Idempotent   bool
	IdempotentOf func(c *fiber.Ctx) bool
	// Audit names the change the audit trail records for the route
	// (audit.go); nil: not audited (reads, beats, node-to-node calls).
	Audit *AuditSpec
}

// audited returns r with its audit trail entry.
func audited(r Route, action string, params []string, refine func(Params) string) Route {
	r.Audit = &AuditSpec{Action: action, Params: params, Refine: refine}
	return r
}

// classOf is the class of one request on the route.
func (r *Route) classOf(c *fiber.Ctx) Class {
	if r.ClassOf != nil {
		return r.ClassOf(c)
	}
	return r.Class
}

// Table is the route table: mounting, the @Secured checks and the
// forwarding of writes all read it, in the order of its routes.
type Table struct {
	routes []Route
	exact  map[string]*Route // "METHOD path" (HEAD looked up as GET)
	prefix []*Route          // paths ending in "/*", longest first
}

// NewTable indexes routes (in mounting order). A method and path declared
// twice is an error.
func NewTable(routes ...[]Route) (*Table, error) {
	t := &Table{exact: map[string]*Route{}}
	for _, rs := range routes {
		t.routes = append(t.routes, rs...)
	}
	for i := range t.routes {
		r := &t.routes[i]
		if r.Handler == nil {
			return nil, fmt.Errorf("httpapi: route %s %s has no handler", r.Method, r.Path)
		}
		if r.Method == MethodAll || r.Method == fiber.MethodHead {
			continue
		}
		if strings.HasSuffix(r.Path, "/*") {
			t.prefix = append(t.prefix, r)
			continue
		}
		key := r.Method + " " + r.Path
		if _, dup := t.exact[key]; dup {
			return nil, fmt.Errorf("httpapi: route %s declared twice", key)
		}
		t.exact[key] = r
	}
	sort.SliceStable(t.prefix, func(i, j int) bool { return len(t.prefix[i].Path) > len(t.prefix[j].Path) })
	return t, nil
}

// MustTable is NewTable for tables fixed in code.
func MustTable(routes ...[]Route) *Table {
	t, err := NewTable(routes...)
	if err != nil {
		panic(err)
	}
	return t
}

// Routes returns the table's routes in order (do not modify them).
func (t *Table) Routes() []Route { return t.routes }

// Mount registers every route on r (the context-path group), in order.
func (t *Table) Mount(r fiber.Router) {
	for _, rt := range t.routes {
		if rt.Method == MethodAll {
			r.All(rt.Path, rt.Handler)
			continue
		}
		r.Add(rt.Method, rt.Path, rt.Handler)
	}
}

// lookup finds the route of key ("METHOD path", HEAD as GET) the way the
// @Secured table always matched: the exact path, else the longest prefix
// route of the method.
func (t *Table) lookup(key string) *Route {
	if r, ok := t.exact[key]; ok {
		return r
	}
	if len(t.prefix) == 0 {
		return nil
	}
	method, path, _ := strings.Cut(key, " ")
	for _, r := range t.prefix {
		if r.Method == method && strings.HasPrefix(path, r.Path[:len(r.Path)-1]) {
			return r
		}
	}
	return nil
}

// Lookup returns the route of method and path (below the context path),
// or nil.
func (t *Table) Lookup(method, path string) *Route {
	if method == fiber.MethodHead {
		method = fiber.MethodGet
	}
	return t.lookup(method + " " + path)
}

// unserved is the route of a path nacosd does not serve but whose
// @Secured check Java runs (conformance/routes.txt: omitted).
func unserved(method, path string, class Class, auth *Secured) Route {
	return Route{Method: method, Path: path, Class: class, Auth: auth, Handler: unrouted, Unserved: true}
}

// unrouted passes a request on as if no route matched.
func unrouted(c *fiber.Ctx) error { return c.Next() }

// route builds a route of a handler group.
func route(method, path string, class Class, auth *Secured, h fiber.Handler) Route {
	return Route{Method: method, Path: path, Class: class, Auth: auth, Handler: h}
}

// withHead adds a HEAD route beside each GET route (Spring maps HEAD onto
// GET handlers) and, when notSupported is set, one MethodAll fallback per
// path after every method of it.
func withHead(routes []Route, notSupported fiber.Handler) []Route {
	var out []Route
	seen := map[string]bool{}
	var paths []string
	for _, r := range routes {
		out = append(out, r)
		if r.Method == fiber.MethodGet {
			out = append(out, Route{Method: fiber.MethodHead, Path: r.Path, Class: r.Class, Handler: r.Handler})
		}
		if !seen[r.Path] {
			seen[r.Path] = true
			paths = append(paths, r.Path)
		}
	}
	if notSupported != nil {
		for _, p := range paths {
			out = append(out, Route{Method: MethodAll, Path: p, Class: Read, Handler: notSupported})
		}
	}
	return out
}

// idempotentRoute marks r idempotent (Route.Idempotent).
func idempotentRoute(r Route) Route {
	r.Idempotent = true
	return r
}

// idempotent reports whether one request on the route may be run twice.
func (r *Route) idempotent(c *fiber.Ctx) bool {
	if r.IdempotentOf != nil {
		return r.IdempotentOf(c)
	}
	return r.Idempotent
}
