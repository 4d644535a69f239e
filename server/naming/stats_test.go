package naming

import (
	"context"
	"testing"
)

func TestStatsCountBeats(t *testing.T) {
	e := newEnv(t)
	svc := "DEFAULT_GROUP@@stats"
	in := Instance{IP: "10.0.0.1", Port: 80, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true, ClusterName: DefaultCluster}
	if err := e.reg.Register(context.Background(), InstanceForm{NamespaceID: DefaultNamespace, ServiceName: svc, Instance: in}); err != nil {
		t.Fatal(err)
	}
	for _, port := range []int{80, 80, 81} {
		if _, err := e.reg.Beat(context.Background(), BeatForm{NamespaceID: DefaultNamespace, ServiceName: svc, ClusterName: DefaultCluster, IP: "10.0.0.1", Port: port}); err != nil {
			t.Fatal(err)
		}
	}
	if st := e.reg.Stats(); st.Beats != 3 || st.BeatsUnknown != 1 {
		t.Fatalf("stats %+v, want 3 beats, 1 unknown", st)
	}
}
