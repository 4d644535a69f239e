package remote

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/nacosd/nacosd/compat"
)

// record is one line of compat/testdata/remote/java-2.5.1-config.jsonl.
type record struct {
	Conn     int               `json:"conn"`
	Method   string            `json:"method"`
	Dir      string            `json:"dir"`
	Type     string            `json:"type"`
	ClientIP string            `json:"clientIp"`
	Headers  map[string]string `json:"headers"`
	Body     string            `json:"body"`
	Raw      string            `json:"raw"`
}

func loadGolden(t testing.TB) []record {
	t.Helper()
	var out []record
	for _, name := range []string{"java-2.5.1-config.jsonl", "java-2.5.1-naming.jsonl"} {
		f, err := os.Open(filepath.Join("..", "testdata", "remote", name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		n := 0
		for sc.Scan() {
			var r record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
			n++
		}
		f.Close()
		if n < 20 {
			t.Fatalf("only %d golden records in %s", n, name)
		}
	}
	return out
}

// TestPayloadGolden decodes every Payload protobuf-java wrote (client and
// server) and encodes it back to the same bytes.
func TestPayloadGolden(t *testing.T) {
	for _, r := range loadGolden(t) {
		raw, err := base64.StdEncoding.DecodeString(r.Raw)
		if err != nil {
			t.Fatal(err)
		}
		var p Payload
		if err := p.Unmarshal(raw); err != nil {
			t.Fatalf("%s %s: %v", r.Dir, r.Type, err)
		}
		if p.Metadata.Type != r.Type || p.Metadata.ClientIP != r.ClientIP || string(p.Body) != r.Body {
			t.Errorf("%s %s: decoded %+v body %s", r.Dir, r.Type, p.Metadata, p.Body)
		}
		if len(r.Headers) != len(p.Metadata.Headers) || len(r.Headers) > 0 && !reflect.DeepEqual(r.Headers, p.Metadata.Headers) {
			t.Errorf("%s %s: headers %v, want %v", r.Dir, r.Type, p.Metadata.Headers, r.Headers)
		}
		// protobuf-java writes map entries in its own order: byte equality
		// holds when there is at most one header
		if len(r.Headers) <= 1 && !bytes.Equal(p.Marshal(), raw) {
			t.Errorf("%s %s: re-encoded\n %x\nwant\n %x", r.Dir, r.Type, p.Marshal(), raw)
		}
	}
}

// TestResponsesGolden renders each response and server request Java wrote
// from the values it carried, and compares the JSON byte for byte.
func TestResponsesGolden(t *testing.T) {
	n := 0
	for _, r := range loadGolden(t) {
		if r.Dir != "s2c" {
			continue
		}
		d, err := DecodeResponse(r.Type, []byte(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		switch r.Type {
		case TypeServerCheckResponse:
			got = encodeJSON(&ServerCheckResponse{Response: d.Response, ConnectionID: d.Str("connectionId"),
				SupportAbilityNegotiation: d.Bool("supportAbilityNegotiation")})
		case TypeConfigPublishResponse, TypeConfigRemoveResponse:
			got = encodeJSON(NewPlain(r.Type, d.Response))
		case TypeConfigQueryResponse:
			q := &ConfigQueryResponse{Response: d.Response, LastModified: d.Int("lastModified"), Beta: d.Bool("beta")}
			for k, dst := range map[string]**string{"content": &q.Content, "encryptedDataKey": &q.EncryptedDataKey,
				"contentType": &q.ContentType, "md5": &q.MD5, "tag": &q.Tag} {
				if s, ok, _ := d.obj.str(k); ok {
					*dst = &s
				}
			}
			got = encodeJSON(q)
		case TypeConfigChangeBatchListenResponse:
			b := &ConfigChangeBatchListenResponse{Response: d.Response, ChangedConfigs: []ConfigContext{}}
			for _, m := range d.Objects("changedConfigs") {
				b.ChangedConfigs = append(b.ChangedConfigs, ConfigContext{Group: m["group"], DataID: m["dataId"], Tenant: m["tenant"]})
			}
			got = encodeJSON(b)
		case TypeSetupAckRequest:
			got = EncodeRequest(&SetupAckRequest{AbilityTable: d.BoolMap("abilityTable")}, r.ClientIP).Body
		case TypeConfigChangeNotifyRequest:
			req := &ConfigChangeNotifyRequest{RequestBase: RequestBase{RequestID: d.RequestID},
				ConfigKey: ConfigKey{DataID: d.Str("dataId"), Group: d.Str("group"), Tenant: d.Str("tenant")}}
			got = EncodeRequest(req, r.ClientIP).Body
		case TypeInstanceResponse, TypeBatchInstanceResponse:
			got = encodeJSON(&InstanceResponse{Response: d.Response, Class: r.Type, Op: d.Str("type")})
		case TypeServiceListResponse:
			l := &ServiceListResponse{Response: d.Response, Count: int(d.Int("count")), ServiceNames: []string{}}
			d.obj.objects("serviceNames", "String", func(*object) error { return nil })
			var names []string
			json.Unmarshal([]byte(d.obj.get("serviceNames").String()), &names)
			l.ServiceNames = append(l.ServiceNames, names...)
			got = encodeJSON(l)
		case TypeQueryServiceResponse, TypeSubscribeServiceResponse:
			si, err := ParseServiceInfo([]byte(r.Body))
			if err != nil {
				t.Fatal(err)
			}
			got = encodeJSON(&ServiceInfoResponse{Response: d.Response, Class: r.Type, ServiceInfo: si})
		case TypeNotifySubscriberRequest:
			si, err := ParseServiceInfo([]byte(r.Body))
			if err != nil {
				t.Fatal(err)
			}
			got = EncodeRequest(&NotifySubscriberRequest{RequestBase: RequestBase{RequestID: d.RequestID}, ServiceInfo: si}, r.ClientIP).Body
			// pre-rendered, as pushes to many subscribers are
			pre := EncodeRequest(&NotifySubscriberRequest{RequestBase: RequestBase{RequestID: d.RequestID},
				ServiceInfoJSON: ServiceInfoJSON(si)}, r.ClientIP).Body
			if string(pre) != string(got) {
				t.Errorf("pre-rendered NotifySubscriberRequest:\n got  %s\n want %s", pre, got)
			}
		default:
			t.Errorf("no renderer for %s", r.Type)
			continue
		}
		n++
		if string(got) != r.Body {
			t.Errorf("%s:\n got  %s\n want %s", r.Type, got, r.Body)
		}
	}
	if n < 10 {
		t.Fatalf("only %d bodies compared", n)
	}
}

func encodeJSON(r Responder) []byte {
	w := compat.NewJSON(64)
	r.AppendJSON(w)
	return w.Bytes()
}

// TestRequestsGolden decodes every request the Java client sent.
func TestRequestsGolden(t *testing.T) {
	for _, r := range loadGolden(t) {
		if r.Dir != "c2s" || r.Type[len(r.Type)-len("Response"):] == "Response" {
			continue
		}
		p := &Payload{Metadata: Metadata{Type: r.Type, ClientIP: r.ClientIP, Headers: r.Headers}, Body: []byte(r.Body)}
		req, err := DecodeRequest(p)
		if err != nil {
			t.Fatalf("%s: %v", r.Type, err)
		}
		if _, unknown := req.(*Unknown); unknown {
			t.Errorf("%s: not decoded", r.Type)
		}
		switch q := req.(type) {
		case *ConnectionSetupRequest:
			if q.ClientVersion != "Nacos-Java-Client:v2.5.1" || q.Labels["module"] != "config" || q.AbilityTable == nil {
				t.Errorf("setup: %+v", q)
			}
		case *ConfigPublishRequest:
			if !q.HasContent || q.DataID == "" || q.AdditionMap["type"] == "" {
				t.Errorf("publish: %+v", q)
			}
		case *ConfigBatchListenRequest:
			if len(q.Contexts) == 0 || q.Contexts[0].MD5 == "" && q.Listen {
				t.Errorf("listen: %+v", q)
			}
		case *ConfigQueryRequest:
			if q.Headers.Get("NOTIFY") == "" || q.Headers.Get("Client-AppName") != "conformance" {
				t.Errorf("query headers: %v", q.Headers)
			}
		case *InstanceRequest:
			if q.Namespace != "public" || q.GroupName != "G1" || q.Instance == nil || q.Instance.IP == "" || !q.HasOp {
				t.Errorf("instance: %+v", q)
			}
		case *PersistentInstanceRequest:
			if q.Instance == nil || q.Instance.Ephemeral {
				t.Errorf("persistent: %+v", q)
			}
		case *BatchInstanceRequest:
			if q.Op != BatchRegisterInstance || len(q.Instances) == 0 || q.Instances[0] == nil {
				t.Errorf("batch: %+v", q)
			}
		case *SubscribeServiceRequest:
			if q.ServiceName == "" || !q.HasGroup || q.Headers.Get("app") != "unknown" {
				t.Errorf("subscribe: %+v", q)
			}
		case *ServiceQueryRequest:
			if !q.HasCluster || q.ServiceName == "" {
				t.Errorf("query: %+v", q)
			}
		case *ServiceListRequest:
			if q.PageNo != 1 || q.PageSize != 10 || q.GroupName != "G1" {
				t.Errorf("list: %+v", q)
			}
		}
	}
}
