package grpcapi

import (
	"testing"

	"github.com/nacosd/nacosd/compat/remote"
)

// Which CP requests go to the next leader when their outcome is unknown:
// a publish without casMd5 as over HTTP, never one with it.
func TestIdempotentRequests(t *testing.T) {
	cases := []struct {
		req  remote.Requester
		want bool
	}{
		{&remote.ConfigPublishRequest{Content: "x"}, true},
		{&remote.ConfigPublishRequest{Content: "x", AdditionMap: map[string]string{"betaIps": "10.0.0.1"}}, true},
		{&remote.ConfigPublishRequest{Content: "x", CasMD5: "0cc175b9c0f1b6a831c399e269772661"}, false},
		{&remote.ConfigRemoveRequest{}, true},
		{&remote.PersistentInstanceRequest{}, true},
	}
	for _, c := range cases {
		if got := idempotent(c.req.Type(), c.req); got != c.want {
			t.Errorf("%s %+v: idempotent %v, want %v", c.req.Type(), c.req, got, c.want)
		}
	}
	for _, typ := range TypesOf(CP) {
		if typ == remote.TypeConfigPublishRequest || idempotentTypes[typ] {
			continue
		}
		t.Errorf("CP type %s is neither idempotent nor a publish: say which", typ)
	}
}
