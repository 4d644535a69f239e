// Command nacosd is a Nacos 1.x server: the naming and config HTTP APIs of
// Java Nacos 1.4.8 in one small binary. Run `nacosd --help` for its flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/nacosd/nacosd/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "nacosd:", err)
		os.Exit(1)
	}
}

// run parses flags (environment variables give the defaults), starts the
// server and blocks until ctx is cancelled, then shuts down gracefully.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg := server.DefaultConfig()
	env := func(def string, names ...string) string {
		for _, n := range names {
			if v := getenv(n); v != "" {
				return v
			}
		}
		return def
	}
	envInt := func(def int, names ...string) int {
		if v := env("", names...); v != "" {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
		return def
	}
	fs := flag.NewFlagSet("nacosd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, `nacosd: a Nacos 1.4.8-compatible server (naming /nacos/v1/ns, config /nacos/v1/cs).

Usage: nacosd [flags]

Every flag can also be set through the environment variable named in brackets
(the names of the Java Nacos docker image where one exists).

`)
		fs.PrintDefaults()
	}
	fs.IntVar(&cfg.Port, "port", envInt(cfg.Port, "NACOS_SERVER_PORT", "NACOSD_PORT"), "HTTP port (server.port) [NACOS_SERVER_PORT]; raft uses port-1000")
	fs.StringVar(&cfg.Host, "host", env(cfg.Host, "NACOSD_HOST"), "HTTP listen host; empty = all interfaces [NACOSD_HOST]")
	fs.StringVar(&cfg.IP, "ip", env("", "NACOS_SERVER_IP", "NACOSD_IP"), "address this node advertises (nacos.server.ip) [NACOS_SERVER_IP]")
	fs.StringVar(&cfg.ContextPath, "context-path", env(cfg.ContextPath, "SERVER_SERVLET_CONTEXTPATH", "NACOSD_CONTEXT_PATH"), "context path (server.servlet.contextPath); / for none [SERVER_SERVLET_CONTEXTPATH]")
	fs.StringVar(&cfg.DataDir, "data-dir", env(cfg.DataDir, "NACOSD_DATA_DIR"), "data directory (raft log and snapshots) [NACOSD_DATA_DIR]")
	mode := fs.String("mode", env("standalone", "MODE", "NACOSD_MODE"), "standalone or cluster (cluster: not supported yet) [MODE]")
	standalone := fs.Bool("standalone", true, "same as -mode=standalone (Java: -Dnacos.standalone=true)")
	fs.StringVar(&cfg.RaftAddr, "raft-addr", env("", "NACOSD_RAFT_ADDR"), "raft bind address (default 127.0.0.1:<port-1000>) [NACOSD_RAFT_ADDR]")
	fs.StringVar(&cfg.PushAddr, "push-addr", env(":0", "NACOSD_PUSH_ADDR"), "UDP push socket bind address [NACOSD_PUSH_ADDR]")
	fs.BoolVar(&cfg.JavaPushTiming, "java-push-timing", env("", "NACOSD_JAVA_PUSH_TIMING") == "true", "push changes 1 s after they happen, as Java Nacos (default: first change at once, then at most one push per second per service) [NACOSD_JAVA_PUSH_TIMING]")
	level := fs.String("log-level", env("info", "NACOSD_LOG_LEVEL"), "log level: debug, info, warn, error [NACOSD_LOG_LEVEL]")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	cfg.Standalone = *standalone && *mode == "standalone"
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("bad -log-level %q: %w", *level, err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv}))

	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	if err := srv.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	cfg.Logger.Info("shutting down")
	return srv.Close()
}
