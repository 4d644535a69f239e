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
	"syscall"
	_ "time/tzdata" // TZ works in the scratch docker image, which has no zoneinfo

	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/settings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var err error
	if len(os.Args) > 1 && os.Args[1] == "migrate" {
		err = runMigrate(ctx, os.Args[2:], os.LookupEnv, os.Stdout, os.Stderr)
	} else {
		err = run(ctx, os.Args[1:], os.LookupEnv, os.Stderr)
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "nacosd:", err)
		os.Exit(1)
	}
}

// run reads the configuration as Java Nacos does (package server/settings),
// starts the server and blocks until ctx is cancelled, then shuts down
// gracefully. lookupEnv reads the environment (os.LookupEnv).
func run(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stderr io.Writer) error {
	if len(args) > 0 && args[0] == "migrate" {
		return runMigrate(ctx, args[1:], lookupEnv, stderr, stderr)
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	st, err := settings.Load(settings.Options{
		Args: args, WorkDir: wd, Output: stderr, LookupEnv: lookupEnv,
	})
	if err != nil {
		return err
	}
	cfg := st.Config
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: st.LogLevel}))
	for _, n := range st.Notes {
		cfg.Logger.Info(n.Msg, n.Args...)
	}
	for _, w := range st.Warnings {
		cfg.Logger.Warn(w)
	}

	if st.PprofAddr != "" {
		stop, err := servePprof(st.PprofAddr, cfg.Logger)
		if err != nil {
			return err
		}
		defer stop()
	}

	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	if err := srv.Start(ctx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		cfg.Logger.Info("shutting down")
	case <-srv.Done(): // a component failed: exit non-zero with its cause
	}
	if err := srv.Close(); err != nil {
		return err
	}
	return srv.Err()
}
