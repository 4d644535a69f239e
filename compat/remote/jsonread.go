package remote

import (
	"strconv"
	"strings"

	"github.com/valyala/fastjson"
)

// Reading a body as Jackson (2.13, JacksonUtils' mapper) does for the
// request classes: property names are case-sensitive, unknown properties are
// ignored (FAIL_ON_UNKNOWN_PROPERTIES off), a repeated property keeps its last
// value, scalars coerce to a String property (1 → "1", true → "true") and
// numeric or boolean text to a number or boolean property, null leaves a
// primitive at its default, and an object or array where a scalar belongs is
// an error (MismatchedInputException).

// DecodeError is a body Jackson would refuse. Java's acceptor answers it with
// an ErrorResponse whose message is Jackson's (BAD_GATEWAY, see Dispatch);
// Msg is our rendering of it, not byte-exact Jackson text.
type DecodeError struct {
	Class string // simple class name
	Msg   string
}

func (e *DecodeError) Error() string {
	return "errCode: 101, errMsg: Nacos deserialize for class [" + e.Class + "] failed, cause error[" + e.Msg + "]. "
}

// object is a parsed body: its properties in order, a repeated one read
// as its last value (get), as Jackson does. The keys alias the parser's
// memory (valid until release).
type object struct {
	class string
	kvs   []objectKV
}

type objectKV struct {
	k []byte
	v *fastjson.Value
}

func newObject(class string, o *fastjson.Object) *object {
	ob := &object{class: class, kvs: make([]objectKV, 0, o.Len())}
	o.Visit(func(k []byte, v *fastjson.Value) { ob.kvs = append(ob.kvs, objectKV{k, v}) })
	return ob
}

// get is property key's last value; nil when absent.
func (o *object) get(key string) *fastjson.Value {
	for i := len(o.kvs) - 1; i >= 0; i-- {
		if string(o.kvs[i].k) == key {
			return o.kvs[i].v
		}
	}
	return nil
}

// keys are the property names, each once.
func (o *object) keys() []string {
	out := make([]string, 0, len(o.kvs))
	for i, kv := range o.kvs {
		dup := false
		for _, later := range o.kvs[i+1:] {
			if string(later.k) == string(kv.k) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, string(kv.k))
		}
	}
	return out
}

// parsers are reused: every value read out of a parse is copied (strings
// are converted, never aliased), so a parser can go back once the object
// has been read.
var parsers fastjson.ParserPool

// parseObject parses body; release (never nil) hands the parser back: call
// it only when nothing read from the object is used any more.
func parseObject(class string, body []byte) (ob *object, release func(), err error) {
	p := parsers.Get()
	release = func() { parsers.Put(p) }
	v, err := p.ParseBytes(body)
	if err != nil {
		return nil, release, &DecodeError{Class: class, Msg: err.Error()}
	}
	if v.Type() == fastjson.TypeNull {
		return nil, release, nil
	}
	o, err := v.Object()
	if err != nil {
		return nil, release, &DecodeError{Class: class, Msg: "Cannot deserialize value of type `" + class + "` from " + tokenName(v)}
	}
	return newObject(class, o), release, nil
}

func tokenName(v *fastjson.Value) string {
	switch v.Type() {
	case fastjson.TypeObject:
		return "Object value (token `JsonToken.START_OBJECT`)"
	case fastjson.TypeArray:
		return "Array value (token `JsonToken.START_ARRAY`)"
	case fastjson.TypeString:
		return "String value"
	case fastjson.TypeNumber:
		return "Number value"
	case fastjson.TypeTrue, fastjson.TypeFalse:
		return "Boolean value"
	}
	return "Null value"
}

func (o *object) fail(key, javaType string, v *fastjson.Value) error {
	return &DecodeError{Class: o.class, Msg: "Cannot deserialize value of type `" + javaType + "` from " + tokenName(v) +
		" (through reference chain: " + o.class + "[\"" + key + "\"])"}
}

// str reads a String property: ok is false when absent or null.
func (o *object) str(key string) (s string, ok bool, err error) {
	v := o.get(key)
	if v == nil {
		return "", false, nil
	}
	return scalarString(v, func() error { return o.fail(key, "java.lang.String", v) })
}

func scalarString(v *fastjson.Value, fail func() error) (string, bool, error) {
	switch v.Type() {
	case fastjson.TypeNull:
		return "", false, nil
	case fastjson.TypeString:
		return string(v.GetStringBytes()), true, nil
	case fastjson.TypeNumber, fastjson.TypeTrue, fastjson.TypeFalse:
		return v.String(), true, nil
	}
	return "", false, fail()
}

// strOr reads a String property, "" when absent or null.
func (o *object) strOr(key string) (string, error) {
	s, _, err := o.str(key)
	return s, err
}

// boolean reads a boolean property; def when absent or null.
func (o *object) boolean(key string, def bool) (bool, error) {
	v := o.get(key)
	if v == nil {
		return def, nil
	}
	switch v.Type() {
	case fastjson.TypeNull:
		return def, nil
	case fastjson.TypeTrue:
		return true, nil
	case fastjson.TypeFalse:
		return false, nil
	case fastjson.TypeString:
		switch s := strings.TrimSpace(string(v.GetStringBytes())); s {
		case "true", "True", "TRUE":
			return true, nil
		case "false", "False", "FALSE":
			return false, nil
		case "":
			return def, nil
		}
		return false, &DecodeError{Class: o.class, Msg: "Cannot deserialize value of type `boolean` from String \"" +
			string(v.GetStringBytes()) + "\": only \"true\" or \"false\" recognized"}
	case fastjson.TypeNumber:
		n, err := v.Int64()
		if err == nil {
			return n != 0, nil
		}
	}
	return false, o.fail(key, "boolean", v)
}

// int64 reads a long property; 0 when absent or null.
func (o *object) int64(key string) (int64, error) {
	v := o.get(key)
	if v == nil {
		return 0, nil
	}
	switch v.Type() {
	case fastjson.TypeNull:
		return 0, nil
	case fastjson.TypeNumber:
		if n, err := v.Int64(); err == nil {
			return n, nil
		}
		if f, err := v.Float64(); err == nil {
			return int64(f), nil
		}
	case fastjson.TypeString:
		s := strings.TrimSpace(string(v.GetStringBytes()))
		if s == "" {
			return 0, nil
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		return 0, &DecodeError{Class: o.class, Msg: "Cannot deserialize value of type `long` from String \"" + s + "\": not a valid `long` value"}
	}
	return 0, o.fail(key, "long", v)
}

// strMap reads a Map<String,String> property (nil when absent or null);
// null values are dropped.
func (o *object) strMap(key string) (map[string]string, error) {
	v := o.get(key)
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil, nil
	}
	ob, err := v.Object()
	if err != nil {
		return nil, o.fail(key, "java.util.Map<java.lang.String,java.lang.String>", v)
	}
	out := make(map[string]string, ob.Len())
	var ferr error
	ob.Visit(func(k []byte, ev *fastjson.Value) {
		if ferr != nil {
			return
		}
		s, ok, err := scalarString(ev, func() error { return o.fail(key, "java.lang.String", ev) })
		if err != nil {
			ferr = err
			return
		}
		if ok {
			out[string(k)] = s
		} else {
			delete(out, string(k))
		}
	})
	return out, ferr
}

// boolMap reads a Map<String,Boolean> property (nil when absent or null).
func (o *object) boolMap(key string) (map[string]bool, error) {
	v := o.get(key)
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil, nil
	}
	ob, err := v.Object()
	if err != nil {
		return nil, o.fail(key, "java.util.Map<java.lang.String,java.lang.Boolean>", v)
	}
	out := make(map[string]bool, ob.Len())
	var ferr error
	ob.Visit(func(k []byte, ev *fastjson.Value) {
		if ferr != nil {
			return
		}
		inner := &object{class: o.class, kvs: []objectKV{{k, ev}}}
		b, err := inner.boolean(string(k), false)
		if err != nil {
			ferr = err
			return
		}
		out[string(k)] = b
	})
	return out, ferr
}

// objects reads a List of objects (nil when absent or null), calling fn for
// each element (nil for a null element).
func (o *object) objects(key, elemClass string, fn func(*object) error) error {
	v := o.get(key)
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil
	}
	arr, err := v.Array()
	if err != nil {
		return o.fail(key, "java.util.List<"+elemClass+">", v)
	}
	for _, ev := range arr {
		if ev.Type() == fastjson.TypeNull {
			if err := fn(nil); err != nil {
				return err
			}
			continue
		}
		eo, err := ev.Object()
		if err != nil {
			return o.fail(key, elemClass, ev)
		}
		if err := fn(newObject(o.class, eo)); err != nil {
			return err
		}
	}
	return nil
}

// Header is a request's headers: Java keeps them in a case-insensitive
// TreeMap, filled from the body's "headers" property and then from the
// Payload's metadata headers (which win).
type Header map[string]string

// Get returns the value of name, matched case-insensitively ("" if absent).
func (h Header) Get(name string) string {
	v, _ := h.Lookup(name)
	return v
}

// Lookup returns the value of name, matched case-insensitively.
func (h Header) Lookup(name string) (string, bool) {
	if v, ok := h[name]; ok {
		return v, true
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// requestBase reads what every request carries: headers and requestId.
func (o *object) requestBase(meta map[string]string) (Header, string, error) {
	body, err := o.strMap("headers")
	if err != nil {
		return nil, "", err
	}
	h := Header{}
	put := func(m map[string]string) {
		for k, v := range m {
			for old := range h { // the TreeMap keeps the first spelling of a key
				if old != k && strings.EqualFold(old, k) {
					h[old] = v
					goto next
				}
			}
			h[k] = v
		next:
		}
	}
	put(body)
	put(meta)
	id, err := o.strOr("requestId")
	return h, id, err
}

func mustClass(typ string) string {
	if c, ok := classNames[typ]; ok {
		return c
	}
	return typ
}

// classNames are the fully qualified names of the classes, for error texts.
var classNames = func() map[string]string {
	m := map[string]string{}
	for _, pkg := range []struct {
		prefix string
		names  []string
	}{
		{"com.alibaba.nacos.api.remote.request.", []string{"ServerCheckRequest", "ConnectionSetupRequest", "HealthCheckRequest",
			"ClientDetectionRequest", "ConnectResetRequest", "SetupAckRequest", "ServerLoaderInfoRequest", "ServerReloadRequest", "PushAckRequest"}},
		{"com.alibaba.nacos.api.remote.response.", []string{"ServerCheckResponse", "SetupAckResponse", "HealthCheckResponse",
			"ClientDetectionResponse", "ConnectResetResponse", "ErrorResponse", "ServerLoaderInfoResponse", "ServerReloadResponse"}},
		{"com.alibaba.nacos.api.config.remote.request.", []string{"ConfigQueryRequest", "ConfigPublishRequest", "ConfigRemoveRequest",
			"ConfigBatchListenRequest", "ConfigChangeNotifyRequest", "ClientConfigMetricRequest"}},
		{"com.alibaba.nacos.api.config.remote.response.", []string{"ConfigQueryResponse", "ConfigPublishResponse", "ConfigRemoveResponse",
			"ConfigChangeBatchListenResponse", "ConfigChangeNotifyResponse", "ClientConfigMetricResponse"}},
		{"com.alibaba.nacos.api.naming.remote.request.", []string{"InstanceRequest", "BatchInstanceRequest", "PersistentInstanceRequest",
			"ServiceListRequest", "ServiceQueryRequest", "SubscribeServiceRequest", "NotifySubscriberRequest"}},
		{"com.alibaba.nacos.api.naming.remote.response.", []string{"InstanceResponse", "BatchInstanceResponse", "ServiceListResponse",
			"QueryServiceResponse", "SubscribeServiceResponse", "NotifySubscriberResponse"}},
	} {
		for _, n := range pkg.names {
			m[n] = pkg.prefix + n
		}
	}
	return m
}()

// int32 reads an int property; 0 when absent or null. A float is
// truncated (ACCEPT_FLOAT_AS_INT), numeric text is parsed, a value out of
// int's range is an error.
func (o *object) int32(key string) (int32, error) {
	v := o.get(key)
	if v == nil {
		return 0, nil
	}
	var n int64
	switch v.Type() {
	case fastjson.TypeNull:
		return 0, nil
	case fastjson.TypeNumber:
		i, err := v.Int64()
		if err != nil {
			f, ferr := v.Float64()
			if ferr != nil || f > 2147483647 || f < -2147483648 {
				return 0, &DecodeError{Class: o.class, Msg: "Numeric value (" + v.String() + ") out of range of int"}
			}
			i = int64(f)
		}
		n = i
	case fastjson.TypeString:
		s := strings.TrimSpace(string(v.GetStringBytes()))
		if s == "" {
			return 0, nil
		}
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, &DecodeError{Class: o.class, Msg: "Cannot deserialize value of type `int` from String \"" + s + "\": not a valid `int` value"}
		}
		n = i
	default:
		return 0, o.fail(key, "int", v)
	}
	if n > 2147483647 || n < -2147483648 {
		return 0, &DecodeError{Class: o.class, Msg: "Numeric value (" + v.String() + ") out of range of int"}
	}
	return int32(n), nil
}

// float64 reads a double property; def when absent, 0 when null.
func (o *object) float64(key string, def float64) (float64, error) {
	v := o.get(key)
	if v == nil {
		return def, nil
	}
	switch v.Type() {
	case fastjson.TypeNull:
		return 0, nil
	case fastjson.TypeNumber:
		return v.Float64()
	case fastjson.TypeString:
		s := strings.TrimSpace(string(v.GetStringBytes()))
		if s == "" {
			return 0, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, &DecodeError{Class: o.class, Msg: "Cannot deserialize value of type `double` from String \"" + s + "\": not a valid `double` value"}
		}
		return f, nil
	}
	return 0, o.fail(key, "double", v)
}

// sub reads an object property: nil when absent or null.
func (o *object) sub(key, class string) (*object, error) {
	v := o.get(key)
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil, nil
	}
	ob, err := v.Object()
	if err != nil {
		return nil, o.fail(key, class, v)
	}
	return newObject(o.class, ob), nil
}
