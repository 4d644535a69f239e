// Package console serves nacosd's web console at <context-path>/ and the
// few /v1/console endpoints the 1.x API lacks (see DESIGN.md). The console
// itself is a static single-page app (ui/, bundled into ui/dist and embedded)
// that does everything through nacosd's HTTP API.
package console

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/buildinfo"
	"github.com/nacosd/nacosd/server/config"
	"github.com/nacosd/nacosd/server/console/live"
	"github.com/nacosd/nacosd/server/httpapi"
)

// RaftStatus is this node's view of the CP (raft) group.
type RaftStatus struct {
	State        string // Leader, Follower, Candidate, Shutdown
	LeaderAddr   string // raft address of the leader, "" if unknown
	Term         string
	AppliedIndex string
}

// Deps are the console's collaborators. Only ContextPath is required; a nil
// collaborator disables the endpoints that need it (they answer 501).
type Deps struct {
	ContextPath string
	Version     string
	// Build is the running binary's build, shown in the about box.
	Build   buildinfo.Info
	Cluster httpapi.Cluster
	Config  *config.Service
	Hub     *live.Hub
	// Raft reports the CP group status of this node.
	Raft func() RaftStatus
	// Distro reports this node's Distro view of each member (cluster
	// mode; nil: no Distro columns).
	Distro func() map[string]DistroView
	// AuthEnabled reports nacos.core.auth.enabled (nil: off).
	AuthEnabled func() bool
	// DefaultAdminPassword reports that auth is on and user nacos still
	// has the password nacos: the console shows a banner (nil: never).
	DefaultAdminPassword func() bool
	Logger               *slog.Logger
}

// Routes are the console pages and the /v1/console extensions (below the
// context path), for the server's route table.
func Routes(d Deps) []httpapi.Route {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	h := &handlers{d}
	a := newAssets(h.infoJSON)
	get := func(path string, auth *httpapi.Secured, fn fiber.Handler) []httpapi.Route {
		return []httpapi.Route{
			{Method: fiber.MethodGet, Path: path, Class: httpapi.Read, Auth: auth, Handler: fn},
			{Method: fiber.MethodHead, Path: path, Class: httpapi.Read, Handler: fn},
		}
	}
	var rs []httpapi.Route
	rs = append(rs, get("/", nil, a.index)...)
	rs = append(rs, get("/index.html", nil, a.index)...)
	rs = append(rs, get("/"+assetDir+"/:file", nil, a.file)...)
	rs = append(rs,
		httpapi.Route{Method: fiber.MethodGet, Path: "/v1/console/ui/info", Class: httpapi.Read, Handler: h.info},
		httpapi.Route{Method: fiber.MethodGet, Path: "/v1/console/events", Class: httpapi.Read, Auth: httpapi.SecuredNamingRead(), Handler: h.events},
		httpapi.Route{Method: fiber.MethodGet, Path: "/v1/console/configs", Class: httpapi.Read, Auth: httpapi.SecuredConfigRead(), Handler: h.searchConfigs},
		httpapi.Route{Method: fiber.MethodPost, Path: "/v1/console/configs/md5", Class: httpapi.Read, Auth: httpapi.SecuredConsoleMD5(), Handler: h.configMD5},
		httpapi.Route{Method: fiber.MethodGet, Path: "/v1/console/cluster/nodes", Class: httpapi.Read, Handler: h.clusterNodes},
	)
	return rs
}

type handlers struct{ Deps }

func notAvailable(what string) error {
	return &compat.Error{Status: fiber.StatusNotImplemented, Body: what + " is not available on this node"}
}

// infoJSON is what the console needs to know before its first page
// (whether to ask for a login, the mode, the version). The page carries it
// (see assets.index), so the first screen needs no round trip for it.
func (h *handlers) infoJSON() []byte {
	auth := h.AuthEnabled != nil && h.AuthEnabled()
	standalone := h.Cluster == nil || h.Cluster.Standalone()
	// anyone can learn it with one login as nacos/nacos: telling the
	// console costs nothing, and the banner moves the admin to change it
	defaultAdmin := auth && h.DefaultAdminPassword != nil && h.DefaultAdminPassword()
	w := compat.NewJSON(352)
	w.BeginObject().
		Key("version").Str(h.Version).
		Key("authEnabled").Bool(auth).
		Key("standalone").Bool(standalone).
		Key("contextPath").Str(h.ContextPath).
		Key("build").BeginObject().
		Key("version").Str(h.Build.Version).
		Key("revision").Str(h.Build.Revision).
		Key("revisionTime").Str(h.Build.TimeText()).
		Key("modified").Bool(h.Build.Modified).
		Key("go").Str(h.Build.GoVersion).
		EndObject().
		Key("defaultAdminPassword").Bool(defaultAdmin).
		EndObject()
	return w.Bytes()
}

// info is GET /v1/console/ui/info: infoJSON for a page that lacks it.
func (h *handlers) info(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return httpapi.SendJSON(c, h.infoJSON())
}
