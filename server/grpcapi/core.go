package grpcapi

import (
	"context"

	"github.com/nacosd/nacosd/compat/remote"
)

// MountCore adds the internal routes every connection uses: the client's
// HealthCheckRequest (its keep-alive, which also refreshes the connection).
func MountCore(s *Server) {
	s.Handle(&Route{Type: remote.TypeHealthCheckRequest, Response: plainResp(remote.TypeHealthCheckResponse),
		Handle: func(context.Context, *Call) (remote.Responder, error) {
			return remote.NewPlain(remote.TypeHealthCheckResponse, remote.OK()), nil
		}})
}
