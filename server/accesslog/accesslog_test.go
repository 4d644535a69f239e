package accesslog

import (
	"os"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/clock/clocktest"
)

func entry(start time.Time) *Entry {
	hdr := map[string]string{"User-Agent": "Nacos-Java-Client:v1.4.8", "Host": "nacos.example:8848", "Authorization": "Bearer abc.def",
		"X-Evil": "a\"b\\c\nd\x01\xe9", "serverIdentity": "s3cret"}
	return &Entry{Start: start, Duration: 1234 * time.Millisecond, Method: "GET", Path: "/nacos/v1/cs/configs",
		Query: "dataId=d&access%54oken=tok&password=pw&tenant=", Protocol: "HTTP/1.1", Status: 200, BytesSent: 0,
		RemoteIP: "10.0.0.7", LocalAddr: "10.0.0.1:8848",
		ReqHeader:  func(k string) string { return hdr[k] },
		RespHeader: func(k string) string { return map[string]string{"Content-Type": "text/plain"}[k] }}
}

func TestFormat(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	start := time.Date(2026, 3, 1, 9, 5, 7, 0, time.UTC)
	for _, c := range []struct{ pattern, want string }{
		{"common", `10.0.0.7 - - [01/Mar/2026:17:05:07 +0800] "GET /nacos/v1/cs/configs?dataId=d&access%54oken=***&password=***&tenant= HTTP/1.1" 200 -`},
		// the Java distribution's pattern
		{`%h %l %u %t "%r" %s %b %D %{User-Agent}i %{Request-Source}i`,
			`10.0.0.7 - - [01/Mar/2026:17:05:07 +0800] "GET /nacos/v1/cs/configs?dataId=d&access%54oken=***&password=***&tenant= HTTP/1.1" 200 - 1234 Nacos-Java-Client:v1.4.8 -`},
		{"%a %A %p %B %H %m %U%q %v %T", `10.0.0.7 10.0.0.1 8848 0 HTTP/1.1 GET /nacos/v1/cs/configs?dataId=d&access%54oken=***&password=***&tenant= nacos.example 1.234`},
		{"%{Authorization}i|%{serverIdentity}i|%{X-Evil}i|%{Content-Type}o|%{JSESSIONID}c|%S|%Q", `Bearer ***|***|a\"b\\c\nd\u0001\u00e9|text/plain|-|-|???Q???`},
		{"100%", "100%"},
	} {
		l := &Log{cfg: Config{Location: loc}, pattern: parsePattern(c.pattern), redact: map[string]bool{"authorization": true, "serveridentity": true}}
		if got := string(l.format(nil, entry(start))); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.pattern, got, c.want)
		}
	}
}

// TestDailyFiles: lines go to access_log.<local date>.log, a new file
// after local midnight; Close flushes.
func TestDailyFiles(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	clk := clocktest.New(time.Date(2026, 3, 1, 23, 59, 0, 0, loc))
	dir := t.TempDir() + "/logs"
	l, err := Open(Config{Enabled: true, Dir: dir, Clock: clk, Location: loc, Pattern: "%s %U"})
	if err != nil {
		t.Fatal(err)
	}
	l.Write(entry(clk.Now()))
	clk.Advance(2 * time.Minute)
	e := entry(clk.Now())
	e.Status = 404
	l.Write(e)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l.Write(e) // after Close: dropped, no panic
	for file, want := range map[string]string{
		dir + "/access_log.2026-03-01.log": "200 /nacos/v1/cs/configs\n",
		dir + "/access_log.2026-03-02.log": "404 /nacos/v1/cs/configs\n",
	} {
		b, err := os.ReadFile(file)
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", file, b, err, want)
		}
	}
}

func TestRedactQuery(t *testing.T) {
	for in, want := range map[string]string{
		"a=1&b=2":                     "a=1&b=2",
		"accessToken=x":               "accessToken=***",
		"ACCESSTOKEN=x&token=y&tok=z": "ACCESSTOKEN=***&token=***&tok=z",
		"password":                    "password", // no value to hide
		"pass%77ord=pw&x=%zz":         "pass%77ord=***&x=%zz",
		"username=nacos&password=n":   "username=nacos&password=***",
	} {
		if got := redactQuery(in); got != want {
			t.Errorf("redactQuery(%q) = %q, want %q", in, got, want)
		}
	}
}
