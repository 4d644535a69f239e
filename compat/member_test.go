package compat

import (
	"encoding/json"
	"math"
	"testing"
)

// Hand-written from console-auth-core-v1.md §4.1 and §4.2.
const (
	goldenMember = `{"ip":"10.0.0.1","port":8848,"state":"UP","extendInfo":{"adWeight":"0","lastRefreshTime":1700000000000,"raftPort":"7848","site":"unknow","version":"1.4.8","weight":"1"},"address":"10.0.0.1:8848","failAccessCnt":0}`
	goldenSelf   = `{"code":200,"message":null,"data":` + goldenMember + `}`
	goldenHealth = `{"code":200,"message":null,"data":"UP"}`
	goldenBadRep = `{"code":400,"message":"Node information is illegal","data":null}`
	goldenRepOK  = `{"code":200,"message":null,"data":"true"}`
	goldenNull   = `{"code":200,"message":null,"data":null}`
)

func specMember() Member {
	return Member{
		IP: "10.0.0.1", Port: 8848, State: MemberUp,
		ExtendInfo: map[string]any{
			"weight": "1", "site": "unknow", "raftPort": "7848", "version": "1.4.8",
			"lastRefreshTime": int64(1700000000000), "adWeight": "0",
		},
	}
}

func TestMemberJSON(t *testing.T) {
	t.Parallel()
	if got := string(specMember().JSON()); got != goldenMember {
		t.Fatalf("member JSON\n got %s\nwant %s", got, goldenMember)
	}
}

func TestMemberAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ip   string
		port int
		want string
	}{
		{"10.0.0.1", 8848, "10.0.0.1:8848"},
		{"::1", 8848, "[::1]:8848"},
		{"[fe80::1]", 8849, "[fe80::1]:8849"},
		{"nacos-0.local", 8848, "nacos-0.local:8848"},
	} {
		if got := (Member{IP: tc.ip, Port: tc.port}).Address(); got != tc.want {
			t.Errorf("Address(%q, %d) = %q, want %q", tc.ip, tc.port, got, tc.want)
		}
	}
}

func TestMemberExtendInfoTypes(t *testing.T) {
	t.Parallel()
	m := Member{IP: "::1", Port: 8848, State: MemberDown, FailAccessCnt: 4, ExtendInfo: map[string]any{
		"s": "x", "i": 7, "nan": math.NaN(), "inf": float32(math.Inf(-1)), "f": 1.0, "g": float32(0.5), "n": json.Number("12"), "b": true, "z": nil,
		"nested": map[string]any{"y": []any{"a", 1}, "x": map[string]string{"k2": "v", "k1": "w"}},
		"list":   []string{"p", "q"}, "other": struct {
			A int `json:"a"`
		}{3},
	}}
	want := `{"ip":"::1","port":8848,"state":"DOWN","extendInfo":{"b":true,"f":1.0,"g":0.5,"i":7,"inf":"-Infinity","list":["p","q"],"n":12,"nan":"NaN","nested":{"x":{"k1":"w","k2":"v"},"y":["a",1]},"other":{"a":3},"s":"x","z":null},"address":"[::1]:8848","failAccessCnt":4}`
	if got := string(m.JSON()); got != want {
		t.Fatalf("member JSON\n got %s\nwant %s", got, want)
	}
	if got := string((Member{IP: "a", Port: 1, State: MemberUp}).JSON()); got != `{"ip":"a","port":1,"state":"UP","extendInfo":{},"address":"a:1","failAccessCnt":0}` {
		t.Fatalf("empty extendInfo: %s", got)
	}
}

func TestRestResultJSON(t *testing.T) {
	t.Parallel()
	m := specMember()
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{"self", RestResultOK(m.AppendJSON), goldenSelf},
		{"health", RestResultString("UP"), goldenHealth},
		{"bad report", RestResultFailed(400, "Node information is illegal"), goldenBadRep},
		{"report ok", RestResultString("true"), goldenRepOK},
		{"null data", RestResultJSON(200, nil, nil), goldenNull},
		{"list", RestResultOK(func(w *JSON) { w.StrList([]string{"a:1"}) }), `{"code":200,"message":null,"data":["a:1"]}`},
	} {
		if string(tc.got) != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
}
