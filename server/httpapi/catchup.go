package httpapi

import (
	"context"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// CatchUpWait is how long a read of raft state waits on a restarted node
// for the node to be back where it was before it stopped.
const CatchUpWait = 5 * time.Second

// msgStarting is Java's answer while a server starts (naming's
// TrafficReviseFilter with the STARTING status): Nacos clients try the
// next server on a 503.
const msgStarting = "server is STARTINGnow, please try again later!"

// caughtUp holds a read of raft state until this node is at least as new
// as it was before it last stopped: a restarted member rebuilds its state
// from its newest snapshot and applies the rest only once a leader tells
// it what is committed, so without the wait a client that read here
// before the restart could read back in time. After CatchUpWait it
// answers 503 (done), and the client moves to another member.
func (g *gate) caughtUp(c *fiber.Ctx) (done bool, err error) {
	ctx, cancel := context.WithTimeout(c.UserContext(), CatchUpWait)
	defer cancel()
	if err := g.CatchUp(ctx); err != nil {
		return true, c.Status(fiber.StatusServiceUnavailable).SendString(msgStarting)
	}
	return false, nil
}

// freshRead reports whether a read route serves raft state (configs,
// namespaces, users and permissions, services and instances), which waits
// for a restarted node to catch up; the node's own state (health, members,
// metrics, raft and Distro status, the console's files) is always served.
func freshRead(path string) bool {
	for _, p := range [...]string{"/v1/ns/operator/", "/v1/ns/ops/", "/v1/ns/raft/", "/v1/ns/distro/",
		"/v1/ns/health/server", "/v1/cs/health", "/v1/cs/ops/"} {
		if strings.HasPrefix(path, p) {
			return false
		}
	}
	for _, p := range [...]string{"/v1/cs/", "/v1/ns/", "/v1/auth/", "/v1/console/namespaces", "/v1/console/configs",
		"/v2/cs/", "/v2/ns/"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
