package naming

import (
	"reflect"
	"testing"
)

// The fast path reads what encodeRecord writes for an instance (else it
// would never be taken).
func TestDecodeInstanceFastReadsEncodedRecords(t *testing.T) {
	for _, in := range []*Instance{
		{IP: "10.0.0.1", Port: 8080, Weight: 1, Healthy: true, Enabled: true, ClusterName: "DEFAULT",
			ServiceName: "DEFAULT_GROUP@@svc", Metadata: map[string]string{}, InstanceID: "10.0.0.1#8080#DEFAULT#DEFAULT_GROUP@@svc"},
		{IP: "::1", Port: 1, Weight: 0.25, ServiceName: "g@@中文", Metadata: map[string]string{"k": "v", "preserved.register.source": "SPRING_CLOUD"},
			LastBeat: 1796320128093, Marked: true, App: "app"},
	} {
		b, err := encodeRecord(in)
		if err != nil {
			t.Fatal(err)
		}
		var fast Instance
		if !decodeInstanceFast(b[1:], &fast) {
			t.Fatalf("fast path refused %q", b)
		}
		out, err := decodeInstance(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*out, *in) || !reflect.DeepEqual(fast, *in) {
			t.Fatalf("decoded %+v (fast %+v), want %+v", *out, fast, *in)
		}
	}
}
