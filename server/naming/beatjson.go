package naming

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nacosd/nacosd/compat"
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
		p := beatParser{s: b.metaRaw}
		p.object(func(k string) bool {
			v, ok := p.plainString()
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
// and reports whether it was.
func parseBeatFast(raw string, b *BeatInfo) bool {
	p := beatParser{s: raw}
	var seen uint8
	ok := p.object(func(k string) bool {
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
		}
		if f < 0 {
			for _, name := range beatFields { // keys are ASCII here: folding keeps lengths
				if len(k) == len(name) && strings.EqualFold(k, name) {
					return false // a case-folded match: encoding/json's rules
				}
			}
			return p.skipScalar()
		}
		if seen&(1<<f) != 0 {
			return false // a repeated field: encoding/json's merging rules
		}
		seen |= 1 << f
		if p.null() {
			if f == 5 || f == 6 { // ephemeral, metadata: a nil pointer/map
				return true
			}
			return true // a null into a non-pointer leaves it unchanged
		}
		switch f {
		case 0, 2, 3:
			v, ok := p.plainString()
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
			num, ok := p.number()
			if !ok || !isJSONInt(num) || len(num) > 18 {
				return false
			}
			n, err := strconv.Atoi(num)
			if err != nil {
				return false
			}
			b.Port = n
			return true
		case 4:
			num, ok := p.number()
			if !ok {
				return false
			}
			w, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return false
			}
			b.Weight = w
			return true
		case 5:
			v, ok := p.boolean()
			if !ok {
				return false
			}
			b.Ephemeral = &v
			return true
		default: // metadata
			start := p.i
			if !p.object(func(string) bool { _, ok := p.plainString(); return ok }) {
				return false
			}
			b.metaRaw = raw[start:p.i]
			return true
		}
	})
	return ok
}

// beatParser scans the JSON subset of the fast path.
type beatParser struct {
	s string
	i int
}

func (p *beatParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *beatParser) peek() byte {
	p.ws()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// object reads {"key": value, ...} with ASCII keys, calling member with
// the parser at the value of each key; member reads the value and reports
// success.
func (p *beatParser) object(member func(key string) bool) bool {
	if p.peek() != '{' {
		return false
	}
	p.i++
	if p.peek() == '}' {
		p.i++
		return true
	}
	for {
		if p.peek() != '"' {
			return false
		}
		k, ascii, ok := p.plainStringASCII()
		if !ok || !ascii || p.peek() != ':' {
			return false
		}
		p.i++
		p.ws()
		if !member(k) {
			return false
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// plainString reads a string without escapes, control characters or
// invalid UTF-8, and returns its text.
func (p *beatParser) plainString() (string, bool) {
	v, _, ok := p.plainStringASCII()
	return v, ok
}

// plainStringASCII is plainString, also reporting whether the text is
// ASCII.
func (p *beatParser) plainStringASCII() (v string, ascii, ok bool) {
	if p.peek() != '"' {
		return "", false, false
	}
	start := p.i + 1
	var high byte
	for j := start; j < len(p.s); j++ {
		c := p.s[j]
		switch {
		case c == '"':
			v := p.s[start:j]
			if high >= 0x80 && !utf8.ValidString(v) {
				return "", false, false
			}
			p.i = j + 1
			return v, high < 0x80, true
		case c == '\\' || c < 0x20:
			return "", false, false
		}
		high |= c
	}
	return "", false, false
}

func (p *beatParser) literal(word string) bool {
	if strings.HasPrefix(p.s[p.i:], word) {
		p.i += len(word)
		return true
	}
	return false
}

func (p *beatParser) null() bool { return p.peek() == 'n' && p.literal("null") }

func (p *beatParser) boolean() (bool, bool) {
	switch p.peek() {
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	}
	return false, false
}

// number reads a JSON number (RFC 8259 grammar) and returns its text.
func (p *beatParser) number() (string, bool) {
	p.ws()
	s, start := p.s, p.i
	j := start
	if j < len(s) && s[j] == '-' {
		j++
	}
	switch {
	case j < len(s) && s[j] == '0':
		j++
	case j < len(s) && s[j] >= '1' && s[j] <= '9':
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
	default:
		return "", false
	}
	if j < len(s) && s[j] == '.' {
		j++
		d := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == d {
			return "", false
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		d := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == d {
			return "", false
		}
	}
	p.i = j
	return s[start:j], true
}

// skipScalar skips the value of an unknown field: a plain string, a
// number, true, false or null (anything else goes to encoding/json).
func (p *beatParser) skipScalar() bool {
	switch c := p.peek(); {
	case c == '"':
		_, ok := p.plainString()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		_, ok := p.number()
		return ok
	case c == 't' || c == 'f':
		_, ok := p.boolean()
		return ok
	case c == 'n':
		return p.null()
	}
	return false
}

// isJSONInt reports a number without fraction or exponent.
func isJSONInt(num string) bool { return !strings.ContainsAny(num, ".eE") }

// parseBeatStd is encoding/json's reading of raw (the fuzz test's oracle).
func parseBeatStd(raw string) (BeatInfo, error) {
	var b BeatInfo
	err := json.NewDecoder(bytes.NewReader([]byte(raw))).Decode(&b)
	return b, err
}
