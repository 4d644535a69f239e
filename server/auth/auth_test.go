package auth

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func fixed(t time.Time) func() time.Time { return func() time.Time { return t } }

func TestLoginDefaultUser(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Now = fixed(time.UnixMilli(1700000000123))
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Login("nacos", "nacos", "")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(r.Token, ".")
	if len(parts) != 3 || parts[0] != "eyJhbGciOiJIUzI1NiJ9" {
		t.Fatalf("token %s", r.Token)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if string(payload) != `{"sub":"nacos","exp":1700018000}` { // floor((now ms + 18000 s)/1000)
		t.Fatalf("payload %s", payload)
	}
	wantPrefix := `{"accessToken":"` + r.Token + `","tokenTtl":18000,"globalAdmin":true,"username":"nacos"}`
	if string(r.JSON()) != wantPrefix {
		t.Fatalf("body %s", r.JSON())
	}
	// a presented valid token is echoed, even with a wrong password
	r2, err := s.Login("x", "y", r.Token)
	if err != nil || r2.Token != r.Token {
		t.Fatalf("token login: %v %+v", err, r2)
	}
	for _, c := range [][2]string{{"nacos", "wrong"}, {"admin", "nacos"}, {"", ""}} {
		if _, err := s.Login(c[0], c[1], ""); err != ErrUnknownUser {
			t.Errorf("%v: %v", c, err)
		}
	}
	// tampered and expired tokens are not accepted
	if _, err := s.Login("", "", r.Token[:len(r.Token)-2]+"AA"); err != ErrUnknownUser {
		t.Errorf("tampered token accepted")
	}
	s.cfg.Now = fixed(time.UnixMilli(1700000000123).Add(DefaultTokenTTL + time.Second))
	if _, err := s.Login("", "", r.Token); err != ErrUnknownUser {
		t.Errorf("expired token accepted")
	}
}

func TestValidate(t *testing.T) {
	c := DefaultConfig()
	c.Key = []byte("short")
	if c.Validate() == nil {
		t.Fatal("short key accepted")
	}
	if len(DefaultConfig().Key) != 51 {
		t.Fatalf("default key is %d bytes, want 51", len(DefaultConfig().Key))
	}
}
