package cluster

import (
	"fmt"
	"slices"
	"testing"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
)

// fakeRaft records the voter changes ReconcileVoters asks for.
type fakeRaft struct {
	leader  bool
	servers []raftstore.Server
	calls   []string
}

func (f *fakeRaft) IsLeader() bool                       { return f.leader }
func (f *fakeRaft) LeaderAddr() string                   { return "10.0.0.1:7848" }
func (f *fakeRaft) Stats() map[string]string             { return map[string]string{"term": "3"} }
func (f *fakeRaft) Servers() ([]raftstore.Server, error) { return f.servers, nil }
func (f *fakeRaft) AddVoter(id, addr string) error {
	f.calls = append(f.calls, "add "+id+" "+addr)
	return nil
}
func (f *fakeRaft) RemoveServer(id string) error {
	f.calls = append(f.calls, "remove "+id)
	return nil
}

// TestBootstrapPeers: a fresh member's voters are every member but the
// Java ones, at their announced raft address or else port − 1000.
func TestBootstrapPeers(t *testing.T) {
	m, _ := newManager(t, "10.0.0.1:8848", "10.0.0.1:8848", "10.0.0.2:8848", "10.0.0.3:8848", "10.0.0.4:8848")
	m.SetKind("10.0.0.2:8848", KindNacosd, "10.0.0.2:9999")
	m.SetKind("10.0.0.3:8848", KindJava, "")
	got := fmt.Sprint(m.BootstrapPeers("10.0.0.1:7848"))
	want := "[{10.0.0.1:8848 10.0.0.1:7848} {10.0.0.2:8848 10.0.0.2:9999} {10.0.0.4:8848 10.0.0.4:7848}]"
	if got != want {
		t.Errorf("peers %s, want %s", got, want)
	}
}

// TestReconcileVoters: the leader adds nacosd members that are not voters
// (or moved), removes voters that left the list or are Java nodes, keeps
// members not heard from and itself; a follower changes nothing.
func TestReconcileVoters(t *testing.T) {
	m, _ := newManager(t, "10.0.0.1:8848", "10.0.0.1:8848", "10.0.0.2:8848", "10.0.0.3:8848", "10.0.0.4:8848", "10.0.0.5:8848")
	m.SetKind("10.0.0.2:8848", KindNacosd, "10.0.0.2:7848") // not a voter yet
	m.SetKind("10.0.0.3:8848", KindJava, "")                // a voter, but Java
	m.SetKind("10.0.0.5:8848", KindNacosd, "10.0.0.5:1111") // a voter at another address
	r := &fakeRaft{servers: []raftstore.Server{
		{ID: "10.0.0.1:8848", Addr: "10.0.0.1:7848", Voter: true},
		{ID: "10.0.0.3:8848", Addr: "10.0.0.3:7848", Voter: true},
		{ID: "10.0.0.4:8848", Addr: "10.0.0.4:7848", Voter: true}, // not heard from: kept
		{ID: "10.0.0.5:8848", Addr: "10.0.0.5:7848", Voter: true},
		{ID: "10.0.0.9:8848", Addr: "10.0.0.9:7848", Voter: true}, // left the list
	}}
	m.ReconcileVoters(r)
	if len(r.calls) != 0 {
		t.Fatalf("a follower changed the voters: %v", r.calls)
	}
	r.leader = true
	m.ReconcileVoters(r)
	slices.Sort(r.calls)
	want := []string{"add 10.0.0.2:8848 10.0.0.2:7848", "add 10.0.0.5:8848 10.0.0.5:1111", "remove 10.0.0.3:8848", "remove 10.0.0.9:8848"}
	if !slices.Equal(r.calls, want) {
		t.Errorf("calls %q, want %q", r.calls, want)
	}
}

// TestPublishRaftMeta: self's raftMetaData names the leader, the group
// and the term for both of Java's raft groups.
func TestPublishRaftMeta(t *testing.T) {
	m, _ := newManager(t, "10.0.0.1:8848", "10.0.0.1:8848", "10.0.0.2:8848")
	m.PublishRaftMeta(&fakeRaft{servers: []raftstore.Server{{ID: "10.0.0.1:8848", Addr: "10.0.0.1:7848"}, {ID: "10.0.0.2:8848", Addr: "10.0.0.2:7848"}}})
	meta, _ := m.Self().ExtendInfo["raftMetaData"].(map[string]any)
	groups, _ := meta["metaDataMap"].(map[string]any)
	for _, g := range []string{"nacos_config", "naming_persistent_service"} {
		got := fmt.Sprint(groups[g])
		if want := "map[leader:10.0.0.1:7848 raftGroupMember:[10.0.0.1:7848 10.0.0.2:7848] term:3]"; got != want {
			t.Errorf("%s: %s, want %s", g, got, want)
		}
	}
}

// TestReported: a report with a raft header marks a nacosd member, one
// without a Java member; an address outside the list is not known.
func TestReported(t *testing.T) {
	m, _ := newManager(t, "10.0.0.1:8848", "10.0.0.1:8848", "10.0.0.2:8848", "10.0.0.3:8848")
	if !m.Reported(compat.ReportedMember{IP: "10.0.0.2", Port: 8848}, "10.0.0.2:7848") {
		t.Fatal("10.0.0.2 not known")
	}
	m.Reported(compat.ReportedMember{IP: "10.0.0.3", Port: 8848}, "")
	if k, a := m.Kind("10.0.0.2:8848"); k != KindNacosd || a != "10.0.0.2:7848" || m.State("10.0.0.2:8848") != compat.MemberUp {
		t.Errorf("10.0.0.2: kind %v raft %q state %s", k, a, m.State("10.0.0.2:8848"))
	}
	if k, _ := m.Kind("10.0.0.3:8848"); k != KindJava {
		t.Errorf("10.0.0.3: kind %v, want Java", k)
	}
	if m.Reported(compat.ReportedMember{IP: "10.0.0.7", Port: 8848}, "") {
		t.Error("an address outside the list is known")
	}
}
