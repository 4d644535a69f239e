package grpcapi

import (
	"fmt"
	"sort"

	"github.com/nacosd/nacosd/compat/remote"
)

// Class is what a request does to the cluster's state, as the HTTP route
// table's classes (server/httpapi/routes.go): the dispatcher reads it
// before the handler runs and sends a CP write to the raft leader, so no
// handler can hide a write from the forwarding by mapping an error.
type Class uint8

// Classes of requests. The zero value is undeclared: a route whose type the
// table does not name cannot be mounted.
const (
	// Read serves this node's state.
	Read Class = iota + 1
	// Local acts on this node or on the connection only (keep-alive,
	// listeners, subscriptions).
	Local
	// AP writes ephemeral naming data: connection-bound instances, held by
	// the member the connection is on and written to the service's Distro
	// owner (naming.go).
	AP
	// CP writes raft state (configs, persistent instances): it runs on the
	// raft leader; a follower forwards it before its handler runs and
	// answers once it applied the leader's write.
	CP
)

var classNames = [...]string{Read: "read", Local: "local", AP: "ap-write", CP: "cp-write"}

func (c Class) String() string {
	if int(c) < len(classNames) && classNames[c] != "" {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// requestClasses is the request table of the SDK port: every request type
// a route may answer, with its class, declared once here.
var requestClasses = map[string]Class{
	remote.TypeHealthCheckRequest: Local,

	remote.TypeConfigQueryRequest:       Read,
	remote.TypeConfigBatchListenRequest: Local,
	remote.TypeConfigPublishRequest:     CP,
	remote.TypeConfigRemoveRequest:      CP,

	remote.TypeServiceQueryRequest:       Read,
	remote.TypeServiceListRequest:        Read,
	remote.TypeSubscribeServiceRequest:   Local,
	remote.TypeInstanceRequest:           AP,
	remote.TypeBatchInstanceRequest:      AP,
	remote.TypePersistentInstanceRequest: CP,
}

// idempotentTypes are the CP types a second run of which leaves and
// answers what one run does: sent to the next leader when the first one
// died with them (with a write id, so that the copy applied second
// changes nothing). A publish is one unless it carries casMd5 (idempotent).
var idempotentTypes = map[string]bool{
	remote.TypeConfigRemoveRequest:       true,
	remote.TypePersistentInstanceRequest: true,
}

// idempotent reports whether req (of type typ) may be sent again when its
// outcome is unknown. A publish may, as over HTTP, unless it carries
// casMd5: its copy sent again would find the first copy's content and be
// refused although the first one was applied (the check runs in the
// handler, before any raft write). Without this, a 2.x client's publish
// on a follower whose leader was paused answered "did not find the Leader
// node" as soon as the next leader was elected, instead of going to it
// (checker seed 1201, check 8).
func idempotent(typ string, req remote.Requester) bool {
	if typ == remote.TypeConfigPublishRequest {
		p, ok := req.(*remote.ConfigPublishRequest)
		return ok && p.CasMD5 == ""
	}
	return idempotentTypes[typ]
}

// ClassOf returns a request type's class (0 when the table does not name
// it).
func ClassOf(typ string) Class { return requestClasses[typ] }

// TypesOf lists the request types of a class, sorted.
func TypesOf(c Class) []string {
	var out []string
	for t, k := range requestClasses {
		if k == c {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}
