package remote

import (
	"sort"

	"github.com/valyala/fastjson"

	"github.com/nacosd/nacosd/compat"
)

// Response codes (ResponseCode) and the error codes of NacosException the
// remote layer answers with.
const (
	CodeSuccess = 200
	CodeFail    = 500

	ErrInvalidServerStatus = 300 // NacosException.INVALID_SERVER_STATUS
	ErrUnregister          = 301 // NacosException.UN_REGISTER
	ErrNoHandler           = 302 // NacosException.NO_HANDLER
	ErrInvalidParam        = 400
	ErrNoRight             = 403
	ErrNotFound            = 404
	ErrServer              = 500
	ErrBadGateway          = 502
	ErrOverThreshold       = 503
)

// Response is what every response class carries (Response.java). Message
// and RequestID are null when empty.
type Response struct {
	ResultCode int
	ErrorCode  int
	Message    string
	// HasMessage writes "message" even when Message is empty.
	HasMessage bool
	RequestID  string
}

// OK is a successful response base.
func OK() Response { return Response{ResultCode: CodeSuccess} }

// Fail is Response.setErrorInfo: resultCode 500, the error code and message.
func Fail(code int, msg string) Response {
	return Response{ResultCode: CodeFail, ErrorCode: code, Message: msg, HasMessage: true}
}

// Success reports resultCode 200 (Response.isSuccess).
func (r Response) Success() bool { return r.ResultCode == CodeSuccess }

// Base returns the response's common part.
func (r *Response) Base() *Response { return r }

// head writes the common leading properties in Jackson's order.
func (r *Response) head(w *compat.JSON) {
	w.BeginObject()
	w.Key("resultCode").Int(int64(r.ResultCode))
	w.Key("errorCode").Int(int64(r.ErrorCode))
	if r.HasMessage || r.Message != "" {
		w.Key("message").Str(r.Message)
	}
	if r.RequestID != "" {
		w.Key("requestId").Str(r.RequestID)
	}
}

// tail writes the getter-only "success" and closes the object.
func (r *Response) tail(w *compat.JSON) {
	w.Key("success").Bool(r.Success())
	w.EndObject()
}

// Responder is a response class: its type name and its JSON.
type Responder interface {
	Type() string
	Base() *Response
	AppendJSON(w *compat.JSON)
}

// Encode renders a response as the Payload Java's GrpcUtils.convert makes:
// the type in the metadata, no client IP, no headers.
func Encode(r Responder) *Payload {
	w := compat.NewJSON(128)
	r.AppendJSON(w)
	return &Payload{Metadata: Metadata{Type: r.Type()}, Body: w.Bytes()}
}

// plain is a response class without properties of its own.
type plain struct {
	Response
	typ string
}

func (p *plain) Type() string { return p.typ }

func (p *plain) AppendJSON(w *compat.JSON) { p.head(w); p.tail(w) }

// NewPlain returns a response of a class that has only the common
// properties (HealthCheckResponse, SetupAckResponse, ConfigPublishResponse,
// ErrorResponse …).
func NewPlain(typ string, r Response) Responder { return &plain{Response: r, typ: typ} }

// ErrorResponse is ErrorResponse.build(errorCode, msg).
func ErrorResponse(code int, msg string) Responder {
	return NewPlain(TypeErrorResponse, Fail(code, msg))
}

// ServerCheckResponse answers ServerCheckRequest with the connection id.
type ServerCheckResponse struct {
	Response
	ConnectionID              string
	SupportAbilityNegotiation bool
}

// Type is the class name.
func (*ServerCheckResponse) Type() string { return TypeServerCheckResponse }

// AppendJSON writes the Jackson JSON.
func (r *ServerCheckResponse) AppendJSON(w *compat.JSON) {
	r.head(w)
	if r.ConnectionID != "" {
		w.Key("connectionId").Str(r.ConnectionID)
	}
	w.Key("supportAbilityNegotiation").Bool(r.SupportAbilityNegotiation)
	r.tail(w)
}

// ConfigQueryResponse answers ConfigQueryRequest. Pointers are null when nil.
type ConfigQueryResponse struct {
	Response
	Content          *string
	EncryptedDataKey *string
	ContentType      *string
	MD5              *string
	LastModified     int64
	Beta             bool
	Tag              *string
}

// Type is the class name.
func (*ConfigQueryResponse) Type() string { return TypeConfigQueryResponse }

// AppendJSON writes the Jackson JSON (properties with a field in field
// declaration order, then getter-only ones).
func (r *ConfigQueryResponse) AppendJSON(w *compat.JSON) {
	r.head(w)
	optStr(w, "content", r.Content)
	optStr(w, "encryptedDataKey", r.EncryptedDataKey)
	optStr(w, "contentType", r.ContentType)
	optStr(w, "md5", r.MD5)
	w.Key("lastModified").Int(r.LastModified)
	// tag has a field; beta (getter isBeta of field isBeta) has none and
	// comes after, with the other getter-only properties
	optStr(w, "tag", r.Tag)
	w.Key("beta").Bool(r.Beta)
	r.tail(w)
}

func optStr(w *compat.JSON, k string, v *string) {
	if v != nil {
		w.Key(k).Str(*v)
	}
}

// ConfigContext is one changed config of a batch listen answer.
type ConfigContext struct {
	Group, DataID, Tenant string
}

// ConfigChangeBatchListenResponse answers ConfigBatchListenRequest.
type ConfigChangeBatchListenResponse struct {
	Response
	ChangedConfigs []ConfigContext
}

// Type is the class name.
func (*ConfigChangeBatchListenResponse) Type() string { return TypeConfigChangeBatchListenResponse }

// AppendJSON writes the Jackson JSON.
func (r *ConfigChangeBatchListenResponse) AppendJSON(w *compat.JSON) {
	r.head(w)
	w.Key("changedConfigs").BeginArray()
	for _, c := range r.ChangedConfigs {
		w.BeginObject().Key("group").Str(c.Group).Key("dataId").Str(c.DataID).Key("tenant").Str(c.Tenant).EndObject()
	}
	w.EndArray()
	r.tail(w)
}

// ServerLoaderInfoResponse answers ServerLoaderInfoRequest.
type ServerLoaderInfoResponse struct {
	Response
	LoaderMetrics map[string]string
}

// Type is the class name.
func (*ServerLoaderInfoResponse) Type() string { return TypeServerLoaderInfoResponse }

// AppendJSON writes the Jackson JSON.
func (r *ServerLoaderInfoResponse) AppendJSON(w *compat.JSON) {
	r.head(w)
	w.Key("loaderMetrics").StrMap(compat.JavaHashMapKeys(r.LoaderMetrics), r.LoaderMetrics, false)
	r.tail(w)
}

// DecodedResponse is a response read back (an ack on the stream, or an
// answer a client reads): the common part, and the body for class-specific
// properties.
type DecodedResponse struct {
	Response
	Type string
	obj  *object
}

// Str returns a String property of the response ("" when absent or null).
func (d *DecodedResponse) Str(key string) string {
	if d.obj == nil {
		return ""
	}
	s, _, _ := d.obj.str(key)
	return s
}

// Bool returns a boolean property of the response.
func (d *DecodedResponse) Bool(key string) bool {
	if d.obj == nil {
		return false
	}
	b, _ := d.obj.boolean(key, false)
	return b
}

// Int returns a long property of the response.
func (d *DecodedResponse) Int(key string) int64 {
	if d.obj == nil {
		return 0
	}
	n, _ := d.obj.int64(key)
	return n
}

// Objects returns the string properties of each object of a list property.
func (d *DecodedResponse) Objects(key string) []map[string]string {
	if d.obj == nil {
		return nil
	}
	var out []map[string]string
	d.obj.objects(key, "Object", func(o *object) error {
		m := map[string]string{}
		if o != nil {
			for _, k := range o.keys() {
				if s, ok, _ := o.str(k); ok {
					m[k] = s
				}
			}
		}
		out = append(out, m)
		return nil
	})
	return out
}

// Map returns a Map<String,String> property.
func (d *DecodedResponse) Map(key string) map[string]string {
	if d.obj == nil {
		return nil
	}
	m, _ := d.obj.strMap(key)
	return m
}

// BoolMap returns a Map<String,Boolean> property.
func (d *DecodedResponse) BoolMap(key string) map[string]bool {
	if d.obj == nil {
		return nil
	}
	m, _ := d.obj.boolMap(key)
	return m
}

// DecodeResponse reads the common response properties of a body whose
// class is typ (resultCode defaults to 200 as in Response.java).
func DecodeResponse(typ string, body []byte) (*DecodedResponse, error) {
	o, _, err := parseObject(mustClass(typ), body) // o lives on in d: the parser is not reused
	if err != nil {
		return nil, err
	}
	d := &DecodedResponse{Type: typ, Response: OK(), obj: o}
	if o == nil {
		return d, nil
	}
	if v := o.get("resultCode"); v != nil && v.Type() != fastjson.TypeNull {
		n, err := o.int64("resultCode")
		if err != nil {
			return nil, err
		}
		d.ResultCode = int(n)
	}
	n, err := o.int64("errorCode")
	if err != nil {
		return nil, err
	}
	d.ErrorCode = int(n)
	if d.Message, d.HasMessage, err = o.str("message"); err != nil {
		return nil, err
	}
	if d.RequestID, err = o.strOr("requestId"); err != nil {
		return nil, err
	}
	return d, nil
}

// sortedKeys returns m's keys in ascending order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
