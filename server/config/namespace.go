package config

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"sort"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
)

// Namespaces (console-auth-core-v1.md §2): tenant_info rows in BucketTenant.
// The public namespace "" is synthetic and never stored.

// Namespaces lists the stored namespaces in creation order.
func (s *Service) Namespaces() []Tenant {
	type row struct {
		t   Tenant
		rev uint64
	}
	var rows []row
	s.store.Scan(BucketTenant, "", func(k string, r raftstore.Record) bool {
		var t Tenant
		if err := decode(r.Value, &t); err != nil {
			s.log.Error("undecodable namespace", "key", k, "err", err)
			return true
		}
		rows = append(rows, row{t, r.Rev})
		return true
	})
	// creation time, then log position: two namespaces created in the same
	// millisecond keep the order they were written in
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].t.Created != rows[j].t.Created {
			return rows[i].t.Created < rows[j].t.Created
		}
		return rows[i].rev < rows[j].rev
	})
	out := make([]Tenant, len(rows))
	for i, r := range rows {
		out[i] = r.t
	}
	return out
}

// Namespace returns a stored namespace.
func (s *Service) Namespace(id string) (Tenant, bool) {
	r, ok := s.store.Get(BucketTenant, id)
	if !ok {
		return Tenant{}, false
	}
	var t Tenant
	if err := decode(r.Value, &t); err != nil {
		return Tenant{}, false
	}
	return t, true
}

var namespaceIDRe = regexp.MustCompile(`^[\w-]+$`)

// CreateNamespace creates a namespace; a blank id gets a random UUID. It
// reports false (no error) for an invalid, over-long or existing id.
func (s *Service) CreateNamespace(ctx context.Context, id, name string, desc *string) (bool, error) {
	if compat.JavaIsBlank(id) {
		id = newUUID()
	} else {
		id = compat.JavaTrim(id)
		if !namespaceIDRe.MatchString(id) || compat.UTF16Len(id) > 128 {
			return false, nil
		}
	}
	now := s.nowMs()
	t := Tenant{ID: id, Name: name, Desc: desc, Source: "nacos", Created: now, Modified: now}
	_, err := s.store.Apply(ctx, raftstore.Batch{
		Conds: []raftstore.Cond{{Kind: raftstore.CondAbsent, Bucket: BucketTenant, Key: id}},
		Ops:   []raftstore.Op{{Kind: raftstore.OpPut, Bucket: BucketTenant, Key: id, Value: encode(&t)}}})
	switch {
	case err == nil:
		return true, nil
	case isCondFailed(err):
		return false, nil
	}
	return false, fmt.Errorf("config: create namespace %q: %w", id, err)
}

// UpdateNamespace sets name and description of an existing namespace; an
// unknown id is a no-op (Java answers true either way).
func (s *Service) UpdateNamespace(ctx context.Context, id, name string, desc *string) error {
	return s.apply(ctx, []raftstore.Key{{Bucket: BucketTenant, Key: id}}, func() (raftstore.Batch, bool) {
		r, ok := s.store.Get(BucketTenant, id)
		if !ok {
			return raftstore.Batch{}, false
		}
		var t Tenant
		if err := decode(r.Value, &t); err != nil {
			t = Tenant{ID: id, Source: "nacos", Created: s.nowMs()}
		}
		t.Name, t.Desc, t.Modified = name, desc, s.nowMs()
		return raftstore.Batch{
			Conds: []raftstore.Cond{{Kind: raftstore.CondRev, Bucket: BucketTenant, Key: id, Rev: r.Rev}},
			Ops:   []raftstore.Op{{Kind: raftstore.OpPut, Bucket: BucketTenant, Key: id, Value: encode(&t)}}}, true
	})
}

// DeleteNamespace removes the namespace row only; its configs stay.
func (s *Service) DeleteNamespace(ctx context.Context, id string) error {
	return s.apply(ctx, []raftstore.Key{{Bucket: BucketTenant, Key: id}}, func() (raftstore.Batch, bool) {
		if _, ok := s.store.Get(BucketTenant, id); !ok {
			return raftstore.Batch{}, false
		}
		return raftstore.Batch{Ops: []raftstore.Op{{Kind: raftstore.OpDelete, Bucket: BucketTenant, Key: id}}}, true
	})
}

// NamespaceExists reports whether a namespace row with this id exists.
func (s *Service) NamespaceExists(id string) bool {
	_, ok := s.store.Get(BucketTenant, id)
	return ok
}

func isCondFailed(err error) bool {
	return err != nil && errors.Is(err, raftstore.ErrCondFailed)
}

// newUUID is UUID.randomUUID().toString().
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
