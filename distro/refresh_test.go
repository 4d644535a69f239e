package distro

import (
	"context"
	"slices"
	"testing"

	"github.com/nacosd/nacosd/compat"
)

// TestRefreshTakesTheOwnersList: a member that proxied a write to the
// owner holds the owner's list after Refresh, before any sync ran (the
// fake clock does not move); a member whose view maps the service to a
// third member applies nothing; a refresh after a deregistration empties
// the list; an owner that cannot be reached is an error.
func TestRefreshTakesTheOwnersList(t *testing.T) {
	h := newHub(t, 3)
	svc := h.services(1, func(s string) bool { return ownerIn(s, h.addrs...) == h.addrs[0] })[0]
	owner, via, third := h.node(h.addrs[0]), h.node(h.addrs[1]), h.node(h.addrs[2])
	in := compat.DistroInstance{IP: "10.0.0.1", Port: 8080, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true,
		ClusterName: "DEFAULT", ServiceName: svc}
	owner.st.register(ref(svc), in)
	if len(via.st.keys(ref(svc))) != 0 {
		t.Fatal("the list reached the member before any sync: the test shows nothing")
	}
	if err := via.d.Refresh(context.Background(), owner.addr, ref(svc)); err != nil {
		t.Fatal(err)
	}
	if got := via.st.keys(ref(svc)); !slices.Equal(got, []string{DatumKey(in)}) {
		t.Fatalf("after Refresh the member holds %v", got)
	}

	h.setView(third.addr, third.addr) // its view: it owns every service
	if err := third.d.Refresh(context.Background(), owner.addr, ref(svc)); err != nil {
		t.Fatal(err)
	}
	if got := third.st.keys(ref(svc)); len(got) != 0 {
		t.Fatalf("a member that maps the service to another owner took %v", got)
	}

	owner.st.deregister(ref(svc), DatumKey(in))
	if err := via.d.Refresh(context.Background(), owner.addr, ref(svc)); err != nil {
		t.Fatal(err)
	}
	if got := via.st.keys(ref(svc)); len(got) != 0 {
		t.Fatalf("after a deregistration and Refresh the member holds %v", got)
	}

	h.stop(owner.addr)
	if err := via.d.Refresh(context.Background(), owner.addr, ref(svc)); err == nil {
		t.Fatal("Refresh from a member that is down: no error")
	}
}
