package server_test

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/server/httpapi"
	"github.com/nacosd/nacosd/server/servertest"
)

var updateRoutes = flag.Bool("update-routes", false, "rewrite conformance/routes.txt's status and class columns from the route table")

const routesFile = "../conformance/routes.txt"

// inventoryLine is one line of conformance/routes.txt.
type inventoryLine struct {
	path, method, handler, status, class, note string
}

func (l inventoryLine) key() string { return l.method + " " + l.path }

// routeClass is the inventory's class of a route: "+" marks a class
// decided per request (an instance write is cp-write for a persistent
// instance).
func routeClass(r *httpapi.Route) string {
	if r.ClassOf != nil {
		return r.Class.String() + "+"
	}
	return r.Class.String()
}

// TestRouteInventory checks conformance/routes.txt against the route
// table of a running node: the file lists every route of the table with
// its class (nacosd's own routes as status nacosd), every route Java 1.4.8
// serves that the file marks served is in the table, and reaches a
// handler of its own (no 404, no "no such api", no Spring "method not
// supported" fallback); missing parameters may still fail, as on Java.
// `go test ./server -run TestRouteInventory -update-routes` rewrites the
// status and class columns from the table.
func routeClassOf(r *httpapi.Route) string {
	if r == nil {
		return ""
	}
	return routeClass(r)
}

func TestRouteInventory(t *testing.T) {
	lines, header := readInventory(t)
	n := servertest.Start(t, servertest.Config(t))
	table := n.Routes()
	inTable := map[string]*httpapi.Route{}
	for i, r := range table.Routes() {
		if r.Method == httpapi.MethodAll || r.Method == fiber.MethodHead {
			continue
		}
		inTable[r.Method+" "+r.Path] = &table.Routes()[i]
	}
	listed := map[string]bool{}
	var out []inventoryLine
	for _, l := range lines {
		listed[l.key()] = true
		r := inTable[l.key()]
		switch {
		case r != nil && r.Unserved:
			l.class = routeClass(r)
			if l.status != "omitted" && !*updateRoutes {
				t.Errorf("%s is not served (only checked) but marked %s", l.key(), l.status)
			}
			l.status = "omitted"
		case r != nil && l.status != "nacosd":
			l.status, l.class = "served", routeClass(r)
		case r != nil:
			l.class = routeClass(r)
		case l.status == "served" || l.status == "nacosd":
			if !*updateRoutes {
				t.Errorf("%s is marked %s but is not in the route table", l.key(), l.status)
			}
			continue // gone from the table
		}
		out = append(out, l)
	}
	var extra []string
	for k := range inTable {
		if !listed[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		r := inTable[k]
		if !*updateRoutes {
			t.Errorf("route %s (%s) of the table is missing from %s", k, routeClass(r), routesFile)
		}
		out = append(out, inventoryLine{path: r.Path, method: r.Method, handler: "-", status: "nacosd", class: routeClass(r),
			note: "nacosd's own route"})
	}
	served := 0
	for _, l := range out {
		if l.class != "" && l.status != "served" && l.status != "nacosd" && l.status != "omitted" {
			t.Errorf("%s: status %s with a class", l.key(), l.status)
		}
		if l.class != routeClassOf(inTable[l.key()]) && !*updateRoutes {
			t.Errorf("%s: class %q in the file, %q in the table", l.key(), l.class, routeClassOf(inTable[l.key()]))
		}
		switch l.status {
		case "served", "nacosd":
			if l.class == "" {
				t.Errorf("%s: %s without a class", l.key(), l.status)
			}
		case "same", "omitted":
			if l.note == "" {
				t.Errorf("%s: %s without a reason", l.key(), l.status)
			}
			continue
		default:
			t.Errorf("%s: status %q", l.key(), l.status)
			continue
		}
		if l.status == "nacosd" {
			continue
		}
		served++
		r := n.Do(l.method, "/nacos"+l.path, nil, nil, nil)
		if r.Status == 404 || r.Status == 501 || strings.Contains(r.Body, "not supported") || strings.Contains(r.Body, "no such api") {
			t.Errorf("%s %s is marked served: %d %s", l.method, l.path, r.Status, r.Body)
		}
	}
	if served < 100 {
		t.Fatalf("only %d served routes read", served)
	}
	if *updateRoutes {
		writeInventory(t, header, out)
	}
}

func readInventory(t *testing.T) (lines []inventoryLine, header []string) {
	t.Helper()
	f, err := os.Open(routesFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			header = append(header, line)
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) < 5 {
			t.Fatalf("bad line %q (path, method, Java handler, status, class, note)", line)
		}
		l := inventoryLine{path: c[0], method: c[1], handler: c[2], status: c[3], class: c[4]}
		if len(c) > 5 {
			l.note = c[5]
		}
		lines = append(lines, l)
	}
	return lines, header
}

func writeInventory(t *testing.T, header []string, lines []inventoryLine) {
	t.Helper()
	var b strings.Builder
	for _, h := range header {
		b.WriteString(h + "\n")
	}
	for _, l := range lines {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s", l.path, l.method, l.handler, l.status, l.class)
		if l.note != "" {
			b.WriteString("\t" + l.note)
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(routesFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
