// Package console serves nacosd's web console at <context-path>/ and the
// few /v1/console endpoints the 1.x API lacks (see DESIGN.md). The console
// itself is a static single-page app (ui/, bundled into ui/dist and embedded)
// that does everything through nacosd's HTTP API.
package console

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
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
	Cluster     httpapi.Cluster
	Config      *config.Service
	Hub         *live.Hub
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

// Mount registers the console pages and the /v1/console extensions on r,
// the context-path group.
func Mount(r fiber.Router, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	h := &handlers{d}
	a := newAssets(h.infoJSON)
	r.Get("/", a.index)
	r.Head("/", a.index)
	r.Get("/index.html", a.index)
	r.Head("/index.html", a.index)
	r.Get("/"+assetDir+"/:file", a.file)
	r.Head("/"+assetDir+"/:file", a.file)

	r.Get("/v1/console/ui/info", h.info)
	r.Get("/v1/console/events", h.events)
	r.Get("/v1/console/configs", h.searchConfigs)
	r.Post("/v1/console/configs/md5", h.configMD5)
	r.Get("/v1/console/cluster/nodes", h.clusterNodes)
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
	w := compat.NewJSON(160)
	w.BeginObject().
		Key("version").Str(h.Version).
		Key("authEnabled").Bool(auth).
		Key("standalone").Bool(standalone).
		Key("contextPath").Str(h.ContextPath).
		Key("defaultAdminPassword").Bool(defaultAdmin).
		EndObject()
	return w.Bytes()
}

// info is GET /v1/console/ui/info: infoJSON for a page that lacks it.
func (h *handlers) info(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return httpapi.SendJSON(c, h.infoJSON())
}
