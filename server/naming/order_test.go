package naming

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func clusterNames(t *testing.T, body []byte) []string {
	t.Helper()
	var v struct {
		Clusters []struct {
			Name string `json:"name"`
		} `json:"clusters"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var out []string
	for _, c := range v.Clusters {
		out = append(out, c.Name)
	}
	return out
}

func (e *env) cluster(svc, name string, port int) {
	e.t.Helper()
	if err := e.reg.UpdateCluster(context.Background(), ClusterForm{NamespaceID: DefaultNamespace, ServiceName: svc, ClusterName: name,
		CheckPort: port, UseInstancePort4Check: true, HealthChecker: HealthChecker{Type: "NONE"}, Metadata: map[string]string{}}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) clusterOrder(svc string) string {
	e.t.Helper()
	b, err := e.reg.GetService(DefaultNamespace, svc)
	if err != nil {
		e.t.Fatal(err)
	}
	return strings.Join(clusterNames(e.t, b), ",")
}

// TestClusterOrder: a service created by POST /service keeps its clusters
// in insertion order (Java's map is the LinkedHashMap Jackson built); one
// created by an instance iterates them as a HashMap (c3, DEFAULT, c2), and
// after a restart (every service read back from its record) keeps that
// order with new clusters appended. Seen on the 1.4.8 reference.
func TestClusterOrder(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.reg.CreateService(ctx, ServiceForm{NamespaceID: DefaultNamespace, ServiceName: "DEFAULT_GROUP@@posted", Selector: Selector{Type: "none"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"DEFAULT", "c2", "c3"} {
		e.cluster("DEFAULT_GROUP@@posted", c, 80)
	}
	if got := e.clusterOrder("DEFAULT_GROUP@@posted"); got != "DEFAULT,c2,c3" {
		t.Errorf("POST-created service: clusters %s, want DEFAULT,c2,c3", got)
	}
	e.register("DEFAULT_GROUP@@implicit", "127.0.0.1", 1, nil)
	e.cluster("DEFAULT_GROUP@@implicit", "c2", 80)
	e.cluster("DEFAULT_GROUP@@implicit", "c3", 80)
	if got := e.clusterOrder("DEFAULT_GROUP@@implicit"); got != "c3,DEFAULT,c2" {
		t.Errorf("instance-created service: clusters %s, want c3,DEFAULT,c2", got)
	}
	e.reg.Close()
	e.open()
	e.cluster("DEFAULT_GROUP@@implicit", "b1", 80)
	if got := e.clusterOrder("DEFAULT_GROUP@@implicit"); got != "c3,DEFAULT,c2,b1" {
		t.Errorf("after a restart: clusters %s, want c3,DEFAULT,c2,b1", got)
	}
}

// TestDefIPPortFrozen: defIPPort takes the check port of the write that
// first stores the cluster and stays when the check port changes.
func TestDefIPPortFrozen(t *testing.T) {
	e := newEnv(t)
	e.register("DEFAULT_GROUP@@frozen", "127.0.0.1", 1, nil)
	e.cluster("DEFAULT_GROUP@@frozen", "c1", 9001)
	e.cluster("DEFAULT_GROUP@@frozen", "c1", 0)
	b, err := e.reg.CatalogService(DefaultNamespace, "DEFAULT_GROUP@@frozen")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"name":"c1","healthChecker":{"type":"NONE"},"defaultPort":80,"defaultCheckPort":80,"useIPPort4Check":true,"metadata":{},"sitegroup":"","defCkport":0,"empty":true,"defIPPort":9001}`) {
		t.Errorf("catalog/service: %s", b)
	}
}

// TestAllDomNames: bare names deduplicated per namespace (a HashSet), the
// count is the sum of the sets.
func TestAllDomNames(t *testing.T) {
	e := newEnv(t)
	e.register("DEFAULT_GROUP@@same", "127.0.0.1", 1, nil)
	e.register("G2@@same", "127.0.0.1", 1, nil)
	e.register("DEFAULT_GROUP@@other", "127.0.0.1", 1, nil)
	b, err := e.reg.AllDomNames(false)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"count":2,"doms":{"public":["other","same"]}}`; string(b) != want {
		t.Errorf("allDomNames %s, want %s", b, want)
	}
	if b, _ := e.reg.AllDomNames(true); string(b) != `{"count":3,"doms":["other","same","same"]}` {
		t.Errorf("DNS-F allDomNames %s", b)
	}
}

// TestClusterCheckPortZero: a cluster first stored with check port 0 fails
// as on Java (its defIPPort would be 0, which Java refuses to read back);
// once stored, port 0 is accepted.
func TestClusterCheckPortZero(t *testing.T) {
	e := newEnv(t)
	e.register("DEFAULT_GROUP@@zero", "127.0.0.1", 1, nil)
	err := e.reg.UpdateCluster(context.Background(), ClusterForm{NamespaceID: DefaultNamespace, ServiceName: "DEFAULT_GROUP@@zero",
		ClusterName: "cz", CheckPort: 0, HealthChecker: HealthChecker{Type: "NONE"}, Metadata: map[string]string{}})
	if ce := asCompat(err); ce == nil || ce.Status != 500 || ce.Body != "caused: errCode: 101, errMsg: Nacos deserialize failed.  ;" {
		t.Fatalf("new cluster with check port 0: %v", err)
	}
	e.cluster("DEFAULT_GROUP@@zero", "cz", 80)
	e.cluster("DEFAULT_GROUP@@zero", "cz", 0)
}
