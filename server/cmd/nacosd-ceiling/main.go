// Command nacosd-ceiling is the trivial HTTP server behind the "ceiling"
// column of docs/benchmarks.md: plain fasthttp answering every request
// with 200 "ok", nothing parsed. Driven with the same wrk scripts as
// nacosd, it shows what the machine, the kernel's loopback and the client
// cost on their own, the upper bound for any server on this machine.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/valyala/fasthttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18080", "listen address")
	flag.Parse()
	ok := []byte("ok")
	h := func(c *fasthttp.RequestCtx) {
		c.SetContentType("text/plain;charset=UTF-8")
		c.SetBody(ok)
	}
	srv := &fasthttp.Server{Handler: h, Name: "ceiling", NoDefaultDate: false}
	if err := srv.ListenAndServe(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "nacosd-ceiling:", err)
		os.Exit(1)
	}
}
