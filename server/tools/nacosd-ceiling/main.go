// Command nacosd-ceiling is the trivial HTTP server behind the "ceiling"
// column of docs/benchmarks.md: plain fasthttp answering every request
// with 200 "ok", nothing parsed. Driven with the same wrk scripts as
// nacosd, it shows what the machine, the kernel's loopback and the client
// cost on their own, the upper bound for any server on this machine.
//
// With -fiber the same answer comes from a fiber app with one catch-all
// route (the "fiber" column): what fiber's routing and context add to
// fasthttp before any nacosd code runs. With -body N the answer is N bytes
// instead of "ok" (a config get answers its 1 KB content).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18080", "listen address")
	useFiber := flag.Bool("fiber", false, "answer through a fiber app with one catch-all route")
	body := flag.Int("body", 0, "answer this many bytes instead of \"ok\"")
	grpcAddr := flag.String("grpc-addr", "", "serve the gRPC ceiling (Nacos 2.x) on this address instead of HTTP")
	grpcStack := flag.String("grpc-stack", "go", "the gRPC ceiling's transport: go (grpc-go) or wire (server/grpcwire)")
	grpcContent := flag.Int("grpc-content", 512, "bytes of content in the gRPC ceiling's ConfigQueryResponse")
	flag.Parse()
	if *grpcAddr != "" {
		if err := serveGRPC(*grpcAddr, *grpcStack, *grpcContent); err != nil {
			fmt.Fprintln(os.Stderr, "nacosd-ceiling:", err)
			os.Exit(1)
		}
		return
	}
	ok := []byte("ok")
	if *body > 0 {
		ok = []byte(strings.Repeat("x", *body))
	}
	var err error
	if *useFiber {
		app := fiber.New(fiber.Config{DisableStartupMessage: true})
		app.All("/*", func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, "text/plain;charset=UTF-8")
			return c.Send(ok)
		})
		err = app.Listen(*addr)
	} else {
		h := func(c *fasthttp.RequestCtx) {
			c.SetContentType("text/plain;charset=UTF-8")
			c.SetBody(ok)
		}
		srv := &fasthttp.Server{Handler: h, Name: "ceiling", NoDefaultDate: false}
		err = srv.ListenAndServe(*addr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "nacosd-ceiling:", err)
		os.Exit(1)
	}
}
