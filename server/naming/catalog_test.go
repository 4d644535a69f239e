package naming

import "testing"

// TestCatalogServiceJSON pins the catalog/service body to the 1.4.8
// reference's rendering, key order included (empty before defIPPort).
func TestCatalogServiceJSON(t *testing.T) {
	e := newEnv(t)
	e.register("DEFAULT_GROUP@@corpus.x", "127.0.0.1", 20001, func(i *Instance) { i.Ephemeral = false })
	b, err := e.reg.CatalogService(DefaultNamespace, "DEFAULT_GROUP@@corpus.x")
	want := `{"service":{"name":"corpus.x","protectThreshold":0.0,"groupName":"DEFAULT_GROUP","selector":{"type":"none"},"metadata":{}},` +
		`"clusters":[{"serviceName":"DEFAULT_GROUP@@corpus.x","name":"DEFAULT","healthChecker":{"type":"TCP"},"defaultPort":80,` +
		`"defaultCheckPort":80,"useIPPort4Check":true,"metadata":{},"sitegroup":"","defCkport":80,"empty":false,"defIPPort":80}]}`
	if err != nil || string(b) != want {
		t.Fatalf("catalog/service\n got %s %v\nwant %s", b, err, want)
	}
}
