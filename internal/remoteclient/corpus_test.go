package remoteclient

import "testing"

// TestNormalizedGetterOrder: Java 2.5.1 writes Instance's getter-only
// properties in an order that changes between JVM starts; two answers that
// differ only there normalise alike, and any other difference stays.
func TestNormalizedGetterOrder(t *testing.T) {
	a := Answer{Type: "QueryServiceResponse", Body: `{"hosts":[{"ip":"1","metadata":{},"ipDeleteTimeout":30000,"instanceIdGenerator":"simple","instanceHeartBeatInterval":5000,"instanceHeartBeatTimeOut":15000}]}`}
	b := Answer{Type: "QueryServiceResponse", Body: `{"hosts":[{"ip":"1","metadata":{},"instanceHeartBeatInterval":5000,"instanceHeartBeatTimeOut":15000,"ipDeleteTimeout":30000,"instanceIdGenerator":"simple"}]}`}
	if a.Normalized(nil) != b.Normalized(nil) {
		t.Fatalf("getter order kept:\n%s\n%s", a.Normalized(nil), b.Normalized(nil))
	}
	c := Answer{Type: "QueryServiceResponse", Body: `{"hosts":[{"ip":"1","metadata":{},"instanceHeartBeatInterval":5000,"instanceHeartBeatTimeOut":15001,"ipDeleteTimeout":30000,"instanceIdGenerator":"simple"}]}`}
	if a.Normalized(nil) == c.Normalized(nil) {
		t.Fatal("a different value normalised away")
	}
}
