package httpapi

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/connbound"
)

// HeldApplier applies writes of connection-bound (2.x) instances a member
// holding their clients' connections sends to this node, their owner
// (server/connbound).
type HeldApplier interface {
	ApplyHeldHere(ops []connbound.Op) []error
}

// HeldBatch is the body of PUT /v1/nacosd/instances (between nacosd
// members only).
type HeldBatch struct {
	Ops []HeldOp `json:"ops"`
}

// HeldOp is one write of a held instance.
type HeldOp struct {
	Kind        string          `json:"kind"` // register, deregister, beat
	NamespaceID string          `json:"namespaceId"`
	Service     string          `json:"service"` // grouped
	Holder      string          `json:"holder"`
	Instance    json.RawMessage `json:"instance"`
}

// HeldAnswer is its answer: one error text per op ("" applied).
type HeldAnswer struct {
	Errors []string `json:"errors"`
}

// HeldRoutes is PUT /v1/nacosd/instances: a holder's batch of registrations,
// beats and deregistrations of the 2.x instances whose services this node
// owns (node-only with auth on).
func HeldRoutes(a HeldApplier) []Route {
	if a == nil {
		return nil
	}
	return []Route{route(fiber.MethodPut, "/v1/nacosd/instances", Local, secNode(), func(c *fiber.Ctx) error {
		var b HeldBatch
		if err := json.Unmarshal(c.Body(), &b); err != nil {
			return compat.IllegalArgument("held instances: " + err.Error())
		}
		ops, err := DecodeHeldOps(b)
		if err != nil {
			return compat.IllegalArgument(err.Error())
		}
		ans := HeldAnswer{Errors: make([]string, len(ops))}
		for i, err := range a.ApplyHeldHere(ops) {
			if err != nil {
				ans.Errors[i] = err.Error()
			}
		}
		out, _ := json.Marshal(ans)
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(out)
	})}
}

// EncodeHeldOps is the body a holder sends.
func EncodeHeldOps(ops []connbound.Op) ([]byte, error) {
	b := HeldBatch{Ops: make([]HeldOp, len(ops))}
	for i, op := range ops {
		in, err := json.Marshal(op.Instance)
		if err != nil {
			return nil, err
		}
		b.Ops[i] = HeldOp{Kind: op.Kind.String(), NamespaceID: op.NamespaceID, Service: op.Service, Holder: op.Holder, Instance: in}
	}
	return json.Marshal(b)
}

// DecodeHeldOps reads a batch.
func DecodeHeldOps(b HeldBatch) ([]connbound.Op, error) {
	ops := make([]connbound.Op, len(b.Ops))
	for i, o := range b.Ops {
		k, ok := connbound.ParseKind(o.Kind)
		if !ok {
			return nil, &json.UnsupportedValueError{Str: "held instances: unknown op " + o.Kind}
		}
		ops[i] = connbound.Op{Kind: k, NamespaceID: o.NamespaceID, Service: o.Service, Holder: o.Holder}
		if err := json.Unmarshal(o.Instance, &ops[i].Instance); err != nil {
			return nil, err
		}
	}
	return ops, nil
}

// LoaderRoutes is GET /v1/nacosd/loader: this node's number of 2.x client
// connections ({"sdkConCount":n}, the metric of Java's
// ServerLoaderInfoRequest), which members compare to rebalance
// connections when one joins (node-only with auth on).
func LoaderRoutes(sdkCount func() int) []Route {
	return []Route{route(fiber.MethodGet, "/v1/nacosd/loader", Local, secNode(), func(c *fiber.Ctx) error {
		out, _ := json.Marshal(map[string]int{"sdkConCount": sdkCount()})
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(out)
	})}
}
