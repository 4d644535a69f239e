package httpapi

import (
	"testing"

	"github.com/valyala/fasthttp"
)

func queryParams(q string) Params {
	var a fasthttp.Args
	a.Parse(q)
	return Params{query: &a}
}

// TestNamingResource: the resource checked is the service the handlers
// reach. Issue 26 item 7: serviceName=G2@@svc&groupName=G1 registers into
// G2 (the handler's GroupedName keeps a grouped name), so G2 is checked,
// not G1 as Java's parser does.
func TestNamingResource(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"namespaceId=nsA&serviceName=svc&groupName=G1", "nsA:G1:naming/svc"},
		{"namespaceId=nsA&serviceName=G1@@svc", "nsA:G1:naming/svc"},
		{"namespaceId=nsA&serviceName=G1@@svc&groupName=G1", "nsA:G1:naming/svc"},
		{"namespaceId=nsA&serviceName=G2@@svc&groupName=G1", "nsA:G2:naming/svc"},
		{"namespaceId=nsA&serviceName=+G2@@svc+&groupName=G1", "nsA:G2:naming/svc"},
		{"namespaceId=nsA&serviceName=G2@@svc@@x&groupName=G1", "nsA:G2:naming/svc@@x"},
		{"namespaceId=nsA&serviceName=svc", "nsA:DEFAULT_GROUP:naming/svc"},
		{"namespaceId=nsA&dom=G2@@svc&groupName=G1", "nsA:G2:naming/svc"},
		{"namespaceId=nsA&serviceName=&dom=G2@@svc", "nsA:G2:naming/svc"},
		{"namespaceId=nsA&groupName=G1", "nsA:*:naming/*"},
		{"namespaceId=public&serviceName=svc", ":DEFAULT_GROUP:naming/svc"},
	} {
		got, err := namingResource(queryParams(c.q))
		if err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.q, got, err, c.want)
		}
	}
	// Java's parser failures, in Java's order
	for _, c := range []struct{ q, want string }{
		{"serviceName=g@@", "Server failed,Index 1 out of bounds for length 1"},
		{"serviceName=@@", "Server failed,Index 0 out of bounds for length 0"},
		{"serviceName=@@&groupName=G", "Server failed,Index 1 out of bounds for length 0"},
	} {
		if _, err := namingResource(queryParams(c.q)); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.q, err, c.want)
		}
	}
}
