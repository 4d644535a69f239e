package main

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/remoteclient"
)

// TestGRPCCeilingAnswers: on both stacks a Nacos 2.x client connects (its
// SetupAckRequest arrives) and the load tool's requests are answered with
// successes of their classes, the config query with its content.
func TestGRPCCeilingAnswers(t *testing.T) {
	for _, stack := range []string{"go", "wire"} {
		t.Run(stack, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go serveGRPCOn(ln, stack, 512)
			defer ln.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cl, err := remoteclient.Dial(ctx, ln.Addr().String(), remoteclient.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if cl.ServerAbilities == nil {
				t.Fatal("no SetupAckRequest")
			}
			key := remote.ConfigKey{DataID: "d", Group: "g", HasDataID: true, HasGroup: true}
			in := remote.NewInstance()
			in.IP, in.HasIP, in.Port = "10.0.0.1", true, 80
			for _, c := range []struct {
				req  remote.Requester
				want string
			}{
				{&remote.ConfigQueryRequest{ConfigKey: key}, remote.TypeConfigQueryResponse},
				{&remote.ConfigPublishRequest{ConfigKey: key, Content: "x"}, remote.TypeConfigPublishResponse},
				{&remote.InstanceRequest{NamingKey: remote.NamingKey{ServiceName: "s", HasService: true}, Op: remote.RegisterInstance,
					HasOp: true, Instance: &in}, remote.TypeInstanceResponse},
				{&remote.HealthCheckRequest{}, remote.TypeHealthCheckResponse},
			} {
				_, d, err := cl.Do(ctx, c.req)
				if err != nil || !d.Success() || d.Type != c.want {
					t.Fatalf("%s: %v, %+v; want a success of %s", c.req.Type(), err, d, c.want)
				}
				if c.want == remote.TypeConfigQueryResponse && len(d.Str("content")) != 512 {
					t.Fatalf("config query content of %d bytes, want 512", len(d.Str("content")))
				}
			}
			_, d, err := cl.Do(ctx, &remote.ServiceListRequest{})
			if err != nil || d.Success() || d.Type != remote.TypeErrorResponse {
				t.Fatalf("an unknown request: %v, %+v; want an ErrorResponse", err, d)
			}
		})
	}
}
