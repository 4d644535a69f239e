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
	"strings"
	"syscall"
	_ "time/tzdata" // TZ works in the scratch docker image, which has no zoneinfo

	"github.com/nacosd/nacosd/internal/buildinfo"
	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/settings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	err := dispatch(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "nacosd:", err)
		os.Exit(1)
	}
}

// dispatch runs the command args name: the server (no command), migrate,
// version or gen-secrets. Help and the commands' output go to stdout, logs
// and errors to stderr.
func dispatch(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) error {
	// The image's entrypoint puts Spring's --spring.config.additional-location=…
	// before whatever `docker run IMAGE …` adds: a command may follow
	// such property arguments (they mean nothing to it).
	cmd := 0
	for cmd < len(args) && strings.HasPrefix(args[cmd], "--") && strings.Contains(args[cmd], ".") {
		cmd++
	}
	if cmd < len(args) {
		switch args[cmd] {
		case "migrate", "version", "-version", "--version", "gen-secrets", "help":
			args = args[cmd:]
		}
	}
	if len(args) > 0 {
		switch args[0] {
		case "migrate":
			return runMigrate(ctx, args[1:], lookupEnv, stdout, stderr)
		case "version", "-version", "--version":
			if len(args) > 1 {
				return fmt.Errorf("%s takes no arguments", args[0])
			}
			fmt.Fprintln(stdout, buildinfo.Read())
			return nil
		case "gen-secrets":
			return genSecrets(args[1:], stdout, stderr)
		case "help":
			args = []string{"--help"}
		}
	}
	return run(ctx, args, lookupEnv, stdout, stderr)
}

// run reads the configuration as Java Nacos does (package server/settings),
// starts the server and blocks until ctx is cancelled, then shuts down
// gracefully. lookupEnv reads the environment (os.LookupEnv); --help goes
// to stdout, the log to stderr.
func run(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	st, err := settings.Load(settings.Options{
		Args: args, WorkDir: wd, Output: stdout, LookupEnv: lookupEnv,
	})
	if err != nil {
		return err
	}
	cfg := st.Config
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: st.LogLevel}))
	b := cfg.Build
	cfg.Logger.Info("nacosd", "version", b.Version, "revision", b.ShortRevision(), "revisionTime", b.TimeText(),
		"modified", b.Modified, "go", b.GoVersion, "nacos", server.Version)
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
