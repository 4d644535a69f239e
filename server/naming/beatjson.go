package naming

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/fastjson"
)

// Beats are the most frequent request a registry serves, and almost every
// one carries the beat JSON of the Java client:
//
//	{"cluster":"DEFAULT","ip":"10.0.0.5","metadata":{...},"period":5000,"port":8080,
//	 "scheduled":false,"serviceName":"DEFAULT_GROUP@@demo","stopped":false,"weight":1.0}
//
// ParseBeatInto reads that shape without encoding/json's reflection and
// allocations. It handles a strict subset of JSON — strings without escapes
// or control characters, numbers, true/false/null, the known fields at most
// once, metadata an object of such strings — and hands everything else to
// encoding/json, so the result is always what encoding/json gives
// (FuzzParseBeat compares the two on every input).

// BeatInfo is the server's RsInfo: the beat JSON clients send (§3.3).
type BeatInfo struct {
	IP          string            `json:"ip"`
	Port        int               `json:"port"`
	ServiceName string            `json:"serviceName"`
	Cluster     string            `json:"cluster"`
	Weight      float64           `json:"weight"`
	Ephemeral   *bool             `json:"ephemeral"`
	Metadata    map[string]string `json:"metadata"`

	// metaRaw is the metadata object's text when the fast path read it
	// (Metadata is then nil until MetadataMap builds it).
	metaRaw string
}

// MetadataMap returns the beat's metadata: nil when absent or null, else
// the map (built on first use when the fast path only checked its text).
func (b *BeatInfo) MetadataMap() map[string]string {
	if b.Metadata == nil && b.metaRaw != "" {
		m := map[string]string{}
		p := fastjson.Scanner{S: b.metaRaw}
		p.Object(func(k string) bool {
			v, ok := p.PlainString()
			m[k] = v
			return ok
		})
		b.Metadata = m
	}
	return b.Metadata
}

// clone copies every string out of shared memory (ParseBeatInto's strings
// alias its input).
func (b *BeatInfo) clone() *BeatInfo {
	c := *b
	c.IP, c.ServiceName, c.Cluster = strings.Clone(b.IP), strings.Clone(b.ServiceName), strings.Clone(b.Cluster)
	c.metaRaw = ""
	if m := b.MetadataMap(); m != nil {
		c.Metadata = make(map[string]string, len(m))
		for k, v := range m {
			c.Metadata[strings.Clone(k)] = strings.Clone(v)
		}
	}
	if b.Ephemeral != nil {
		e := *b.Ephemeral
		c.Ephemeral = &e
	}
	return &c
}

// ParseBeat decodes the beat parameter, unknown fields ignored. Errors carry
// the body Java gives for a NacosDeserializationException. The result
// shares no memory with raw.
func ParseBeat(raw string) (*BeatInfo, error) {
	var b BeatInfo
	if err := ParseBeatInto(raw, &b); err != nil {
		return nil, err
	}
	return b.clone(), nil
}

// ParseBeatInto decodes the beat parameter into b (zeroed first). b's
// strings may share raw's memory: keep them only as long as raw, or clone.
func ParseBeatInto(raw string, b *BeatInfo) error {
	*b = BeatInfo{}
	if parseBeatFast(raw, b) {
		return nil
	}
	if msg := compat.JacksonSyntaxError(raw); msg != "" {
		return compat.DeserializeError("com.alibaba.nacos.naming.healthcheck.RsInfo", msg)
	}
	std := new(BeatInfo) // b itself stays where the caller has it (no escape)
	dec := json.NewDecoder(strings.NewReader(raw))
	if err := dec.Decode(std); err != nil {
		*b = BeatInfo{}
		return compat.DeserializeError("com.alibaba.nacos.naming.healthcheck.RsInfo", err.Error()) // Jackson words it differently; the prefix is what clients see
	}
	*b = *std
	return nil
}

// beatFields are BeatInfo's JSON names; encoding/json also matches them
// case-insensitively, which the fast path leaves to it.
var beatFields = [...]string{"ip", "port", "serviceName", "cluster", "weight", "ephemeral", "metadata"}

// parseBeatFast fills b from raw when raw is in the subset described above,
// and reports whether it was. It is fastjson.Fields with the field lookup
// as an inline switch: through Fields' search and callbacks the parse
// measured 8–15 % slower (BenchmarkParseBeatFast), on the hottest path.
func parseBeatFast(raw string, b *BeatInfo) bool {
	p := fastjson.Scanner{S: raw}
	var seen uint8
	ok := p.Object(func(k string) bool {
		f := -1
		switch k {
		case "ip":
			f = 0
		case "port":
			f = 1
		case "serviceName":
			f = 2
		case "cluster":
			f = 3
		case "weight":
			f = 4
		case "ephemeral":
			f = 5
		case "metadata":
			f = 6
		case "period", "scheduled", "stopped": // the Java client's other fields: no case-fold of ours
			return p.SkipScalar()
		}
		if f < 0 {
			return !fastjson.FoldsTo(k, beatFields[:]) && p.SkipScalar()
		}
		if seen&(1<<f) != 0 {
			return false // a repeated field: encoding/json's merging rules
		}
		seen |= 1 << f
		if p.Null() {
			if f == 5 || f == 6 { // ephemeral, metadata: a nil pointer/map
				return true
			}
			return true // a null into a non-pointer leaves it unchanged
		}
		switch f {
		case 0, 2, 3:
			v, ok := p.PlainString()
			if !ok {
				return false
			}
			switch f {
			case 0:
				b.IP = v
			case 2:
				b.ServiceName = v
			case 3:
				b.Cluster = v
			}
			return true
		case 1:
			n, ok := p.Int()
			b.Port = int(n)
			return ok
		case 4:
			w, ok := p.Float()
			b.Weight = w
			return ok
		case 5:
			v, ok := p.Bool()
			if !ok {
				return false
			}
			b.Ephemeral = &v
			return true
		default: // metadata
			start := p.I
			if !p.Object(func(string) bool { _, ok := p.PlainString(); return ok }) {
				return false
			}
			b.metaRaw = raw[start:p.I]
			return true
		}
	})
	return ok
}

// parseBeatStd is encoding/json's reading of raw (the fuzz test's oracle).
func parseBeatStd(raw string) (BeatInfo, error) {
	var b BeatInfo
	err := json.NewDecoder(bytes.NewReader([]byte(raw))).Decode(&b)
	return b, err
}
