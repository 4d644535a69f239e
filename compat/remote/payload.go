// Package remote is the Nacos 2.x gRPC wire format without gRPC: the
// protobuf Payload every call carries, and the JSON of the request and
// response classes a Payload's body holds, as Java Nacos 2.5.1's Jackson
// writes and reads them.
//
// The protocol (api/src/main/proto/nacos_grpc_service.proto in the Nacos
// source) has two services: Request.request, a unary call, and
// BiRequestStream.requestBiStream, a stream both ways. Every message of both
// is a Payload:
//
//	message Metadata { string type = 3; string clientIp = 8; map<string,string> headers = 7; }
//	message Payload  { Metadata metadata = 2; google.protobuf.Any body = 3; }
//
// metadata.type is the simple name of the Java class (ConfigQueryRequest,
// ErrorResponse …) and body.value its Jackson JSON; body.type_url is left
// empty by Java. A request's headers travel in metadata.headers, not in the
// JSON (Java clears them before it serialises a request). The encoding here
// is written by hand with protowire, so the package has no generated code
// and no gRPC import; server/grpcapi plugs Codec into grpc-go.
package remote

import (
	"errors"
	"fmt"
	"sort"

	"google.golang.org/protobuf/encoding/protowire"
)

// Metadata is the Payload's metadata message.
type Metadata struct {
	// Type is the simple Java class name of the body.
	Type string
	// ClientIP is the sender's own idea of its IP (NetUtils.localIP()).
	ClientIP string
	// Headers are the request's headers (accessToken, app, …); responses
	// carry none.
	Headers map[string]string
}

// Payload is one message of either service.
type Payload struct {
	Metadata Metadata
	// TypeURL is google.protobuf.Any's type_url; Java neither sets nor reads it.
	TypeURL string
	// Body is google.protobuf.Any's value: the JSON of the class Metadata.Type names.
	Body []byte
}

// Field numbers of nacos_grpc_service.proto and google/protobuf/any.proto.
const (
	fieldPayloadMetadata = 2
	fieldPayloadBody     = 3
	fieldMetaType        = 3
	fieldMetaHeaders     = 7
	fieldMetaClientIP    = 8
	fieldAnyTypeURL      = 1
	fieldAnyValue        = 2
	fieldMapKey          = 1
	fieldMapValue        = 2
)

// ErrMalformed is returned by Unmarshal for bytes that are not a Payload.
var ErrMalformed = errors.New("remote: malformed payload")

// Marshal encodes p as protobuf, fields in number order as protobuf-java
// writes them (header entries sorted by key, which protobuf-java does not
// promise; no parser depends on the order of map entries). Empty strings
// are omitted (proto3); the metadata and body messages are always written,
// as Java's GrpcUtils always sets both.
func (p *Payload) Marshal() []byte {
	return p.AppendMarshal(make([]byte, 0, p.size()))
}

// AppendMarshal appends the encoding of p to b.
func (p *Payload) AppendMarshal(b []byte) []byte {
	b = protowire.AppendTag(b, fieldPayloadMetadata, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(p.Metadata.size()))
	b = p.Metadata.appendTo(b)
	b = protowire.AppendTag(b, fieldPayloadBody, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(p.anySize()))
	b = appendString(b, fieldAnyTypeURL, p.TypeURL)
	if len(p.Body) > 0 {
		b = protowire.AppendTag(b, fieldAnyValue, protowire.BytesType)
		b = protowire.AppendBytes(b, p.Body)
	}
	return b
}

func (p *Payload) anySize() int {
	n := stringSize(fieldAnyTypeURL, p.TypeURL)
	if len(p.Body) > 0 {
		n += protowire.SizeTag(fieldAnyValue) + protowire.SizeBytes(len(p.Body))
	}
	return n
}

func (p *Payload) size() int {
	m, a := p.Metadata.size(), p.anySize()
	return protowire.SizeTag(fieldPayloadMetadata) + protowire.SizeBytes(m) +
		protowire.SizeTag(fieldPayloadBody) + protowire.SizeBytes(a)
}

func stringSize(num protowire.Number, s string) int {
	if s == "" {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(len(s))
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func entrySize(k, v string) int { return stringSize(fieldMapKey, k) + stringSize(fieldMapValue, v) }

func (m *Metadata) size() int {
	n := stringSize(fieldMetaType, m.Type) + stringSize(fieldMetaClientIP, m.ClientIP)
	for k, v := range m.Headers {
		n += protowire.SizeTag(fieldMetaHeaders) + protowire.SizeBytes(entrySize(k, v))
	}
	return n
}

func (m *Metadata) appendTo(b []byte) []byte {
	b = appendString(b, fieldMetaType, m.Type)
	if len(m.Headers) > 0 {
		keys := make([]string, 0, len(m.Headers))
		for k := range m.Headers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := m.Headers[k]
			b = protowire.AppendTag(b, fieldMetaHeaders, protowire.BytesType)
			b = protowire.AppendVarint(b, uint64(entrySize(k, v)))
			b = appendString(b, fieldMapKey, k)
			b = appendString(b, fieldMapValue, v)
		}
	}
	return appendString(b, fieldMetaClientIP, m.ClientIP)
}

// Unmarshal decodes a Payload as protobuf-java would: unknown fields are
// skipped, a repeated scalar field keeps its last value, a repeated message
// field is merged, and a wrong wire type for a known field is an error.
// Body aliases b.
func (p *Payload) Unmarshal(b []byte) error {
	*p = Payload{}
	return walk(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch num {
		case fieldPayloadMetadata:
			if typ != protowire.BytesType {
				return fmt.Errorf("%w: metadata has wire type %d", ErrMalformed, typ)
			}
			return p.Metadata.unmarshal(v)
		case fieldPayloadBody:
			if typ != protowire.BytesType {
				return fmt.Errorf("%w: body has wire type %d", ErrMalformed, typ)
			}
			return walk(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
				if num != fieldAnyTypeURL && num != fieldAnyValue {
					return nil
				}
				if typ != protowire.BytesType {
					return fmt.Errorf("%w: Any field %d has wire type %d", ErrMalformed, num, typ)
				}
				if num == fieldAnyTypeURL {
					p.TypeURL = string(v)
				} else {
					p.Body = v
				}
				return nil
			})
		}
		return nil
	})
}

// PeekType is metadata.type of an encoded Payload, read without decoding
// the rest; it aliases b. Nil when absent or malformed.
func PeekType(b []byte) []byte {
	var typ []byte
	err := walk(b, func(num protowire.Number, wt protowire.Type, v []byte) error {
		if num != fieldPayloadMetadata || wt != protowire.BytesType {
			return nil
		}
		return walk(v, func(num protowire.Number, wt protowire.Type, v []byte) error {
			if num == fieldMetaType && wt == protowire.BytesType {
				typ = v
			}
			return nil
		})
	})
	if err != nil {
		return nil
	}
	return typ
}

func (m *Metadata) unmarshal(b []byte) error {
	return walk(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch num {
		case fieldMetaType, fieldMetaClientIP, fieldMetaHeaders:
			if typ != protowire.BytesType {
				return fmt.Errorf("%w: metadata field %d has wire type %d", ErrMalformed, num, typ)
			}
		default:
			return nil
		}
		switch num {
		case fieldMetaType:
			m.Type = string(v)
		case fieldMetaClientIP:
			m.ClientIP = string(v)
		case fieldMetaHeaders:
			var k, val string
			err := walk(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
				if num != fieldMapKey && num != fieldMapValue {
					return nil
				}
				if typ != protowire.BytesType {
					return fmt.Errorf("%w: header entry field %d has wire type %d", ErrMalformed, num, typ)
				}
				if num == fieldMapKey {
					k = string(v)
				} else {
					val = string(v)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if m.Headers == nil {
				m.Headers = map[string]string{}
			}
			m.Headers[k] = val
		}
		return nil
	})
}

// walk calls fn for each field of a message; v is the field's bytes for
// length-delimited fields and nil otherwise.
func walk(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: %v", ErrMalformed, protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		if typ == protowire.BytesType {
			v, n = protowire.ConsumeBytes(b)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("%w: field %d: %v", ErrMalformed, num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := fn(num, typ, v); err != nil {
			return err
		}
	}
	return nil
}
