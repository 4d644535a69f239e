package remote

import "fmt"

// Codec marshals Payloads for grpc-go (it satisfies encoding.Codec without
// importing gRPC). A *[]byte passes through unchanged, for relays that do
// not decode what they carry.
type Codec struct{}

// Marshal encodes a *Payload (or returns a *[]byte's bytes).
func (Codec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case *Payload:
		return m.Marshal(), nil
	case *[]byte:
		return *m, nil
	}
	return nil, fmt.Errorf("remote: cannot marshal %T", v)
}

// Unmarshal decodes into a *Payload (copying the bytes, which gRPC may
// reuse) or a *[]byte.
func (Codec) Unmarshal(data []byte, v any) error {
	switch m := v.(type) {
	case *Payload:
		return m.Unmarshal(append([]byte(nil), data...))
	case *[]byte:
		*m = append((*m)[:0], data...)
		return nil
	}
	return fmt.Errorf("remote: cannot unmarshal into %T", v)
}

// Name is the codec's content subtype: "proto", as Java's clients and
// servers send (application/grpc).
func (Codec) Name() string { return "proto" }
