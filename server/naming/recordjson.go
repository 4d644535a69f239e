package naming

import (
	"unsafe"

	"github.com/nacosd/nacosd/internal/fastjson"
)

// A start reads every persistent instance record, and encoding/json's
// reflection was a quarter of a start with 100 000 of them (4.5 µs each).
// decodeInstanceFast reads the JSON json.Marshal writes for an Instance —
// the fields once each, plain strings — and leaves everything else to
// encoding/json, so the result is always encoding/json's
// (FuzzDecodeInstance compares the two).

// instanceFields are Instance's JSON names.
var instanceFields = [...]string{"instanceId", "ip", "port", "weight", "healthy", "enabled", "ephemeral",
	"clusterName", "serviceName", "metadata", "lastBeat", "marked", "app"}

// decodeInstanceFast fills in (zero) from the JSON text of a stored record
// and reports whether the text was in the subset. The strings share text's
// memory: stored records are never modified (raftstore.Record).
func decodeInstanceFast(text []byte, in *Instance) bool {
	p := fastjson.Scanner{S: unsafe.String(unsafe.SliceData(text), len(text))}
	ok := p.Fields(instanceFields[:], func(f int) bool {
		var ok bool
		switch f {
		case 0:
			in.InstanceID, ok = p.PlainString()
		case 1:
			in.IP, ok = p.PlainString()
		case 2:
			var n int64
			n, ok = p.Int()
			in.Port = int(n)
		case 3:
			in.Weight, ok = p.Float()
		case 4:
			in.Healthy, ok = p.Bool()
		case 5:
			in.Enabled, ok = p.Bool()
		case 6:
			in.Ephemeral, ok = p.Bool()
		case 7:
			in.ClusterName, ok = p.PlainString()
		case 8:
			in.ServiceName, ok = p.PlainString()
		case 9:
			m := map[string]string{}
			ok = p.Object(func(k string) bool {
				v, ok := p.PlainString()
				m[k] = v
				return ok
			})
			in.Metadata = m
		case 10:
			in.LastBeat, ok = p.Int()
		case 11:
			in.Marked, ok = p.Bool()
		case 12:
			in.App, ok = p.PlainString()
		}
		return ok
	})
	return ok && p.End()
}
