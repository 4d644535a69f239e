package main

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestLastRefTime(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`{"type":"dom","data":"{\"lastRefTime\":111,\"hosts\":[]}","lastRefTime":1234567890123}`, "1234567890123"},
		{`{"type":"dom","lastRefTime":42,"data":"{\"lastRefTime\":7}"}`, "42"},
		{`{"type":"dom","data":"{\"lastRefTime\":7}"}`, ""},
		{`not json`, ""},
	} {
		if got := lastRefTime([]byte(c.in)); got != c.want {
			t.Errorf("lastRefTime(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRequestParses(t *testing.T) {
	t.Parallel()
	raw := request("POST", "/nacos/v1/cs/configs/listener?x=1", "application/x-www-form-urlencoded",
		map[string]string{"Long-Pulling-Timeout": "30000"}, []byte("Listening-Configs=a%02b%02%01"))
	var r fasthttp.Request
	if err := r.Read(bufio.NewReader(bytes.NewReader(raw))); err != nil {
		t.Fatalf("read %q: %v", raw, err)
	}
	if string(r.Header.Method()) != "POST" || string(r.URI().QueryArgs().Peek("x")) != "1" ||
		string(r.Header.Peek("Long-Pulling-Timeout")) != "30000" || string(r.PostArgs().Peek("Listening-Configs")) != "a\x02b\x02\x01" {
		t.Errorf("request %q parsed as %s", raw, r.String())
	}
}
