package server_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/nacosd/nacosd/server/servertest"
)

// TestRouteInventory checks conformance/routes.txt against a running
// server: every route Java 1.4.8 serves that the inventory marks served
// reaches a handler of its own (no 404, no "no such api", no Spring "method
// not supported" fallback); missing parameters may still fail, as on Java.
func TestRouteInventory(t *testing.T) {
	f, err := os.Open("../conformance/routes.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := servertest.Start(t, servertest.Config(t))
	sc := bufio.NewScanner(f)
	served := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < 4 {
			t.Fatalf("bad line %q", line)
		}
		path, method, status := cols[0], cols[1], cols[3]
		switch status {
		case "served":
		case "same", "cluster", "omitted":
			if len(cols) < 5 || cols[4] == "" {
				t.Errorf("%s %s: %s without a reason", method, path, status)
			}
			continue
		default:
			t.Errorf("%s %s: status %q", method, path, status)
			continue
		}
		served++
		r := n.Do(method, "/nacos"+path, nil, nil, nil)
		if r.Status == 404 || r.Status == 501 || strings.Contains(r.Body, "not supported") || strings.Contains(r.Body, "no such api") {
			t.Errorf("%s %s is marked served: %d %s", method, path, r.Status, r.Body)
		}
	}
	if served < 100 {
		t.Fatalf("only %d served routes read", served)
	}
}
