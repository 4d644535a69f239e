package grpcapi

import (
	"testing"

	"github.com/nacosd/nacosd/compat/remote"
)

type authSwitch bool

func (a authSwitch) Enabled() bool { return bool(a) }
func (authSwitch) CheckRemote(remote.Header, string, string, string) (string, int, string) {
	return "", 0, ""
}

// Which requests the lean transport runs on the connection's reader: the
// answers from memory, an InstanceRequest only when every write is local
// (standalone), nothing with auth on and nothing on the stream.
func TestInlineRequests(t *testing.T) {
	body := func(r remote.Requester) []byte { return remote.EncodeRequest(r, "10.0.0.1").Marshal() }
	query, register := body(&remote.ConfigQueryRequest{}), body(&remote.InstanceRequest{Op: remote.RegisterInstance, HasOp: true})
	publish := body(&remote.ConfigPublishRequest{Content: "x"})
	cases := []struct {
		name        string
		auth, local bool
		method      string
		req         []byte
		want        bool
	}{
		{"query", false, false, methodRequest, query, true},
		{"query with auth", true, false, methodRequest, query, false},
		{"register in a cluster", false, false, methodRequest, register, false},
		{"register standalone", false, true, methodRequest, register, true},
		{"register standalone with auth", true, true, methodRequest, register, false},
		{"publish standalone", false, true, methodRequest, publish, false},
		{"on the stream", false, true, methodBiRequest, register, false},
	}
	for _, c := range cases {
		s := &Server{cfg: Config{Auth: authSwitch(c.auth), LocalWrites: c.local}}
		if got := s.inline(nil, c.method, c.req); got != c.want {
			t.Errorf("%s: inline %v, want %v", c.name, got, c.want)
		}
	}
}
