package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nacosd/nacosd/server/migrate"
	"github.com/nacosd/nacosd/server/settings"
)

// runMigrate is `nacosd migrate`: copy a Java Nacos (its HTTP API and/or
// its MySQL database) into a running nacosd. The summary goes to stdout,
// progress to stderr. Passwords may come from the environment instead of
// flags (NACOS_MIGRATE_FROM_PASSWORD, NACOS_MIGRATE_TO_PASSWORD,
// NACOS_MIGRATE_MYSQL_PASSWORD) so they stay out of process listings.
func runMigrate(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) error {
	env := func(k, def string) string {
		if v, ok := lookupEnv(k); ok && v != "" {
			return v
		}
		return def
	}
	fs := flag.NewFlagSet("nacosd migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o migrate.Options
	fs.StringVar(&o.From, "from", "", "Java Nacos base URL with its context path, e.g. http://10.0.0.5:8848/nacos (naming, and configs and users unless -from-mysql)")
	fs.StringVar(&o.FromUser, "from-user", "", "Java Nacos user (an admin when its auth is on)")
	fs.StringVar(&o.FromPassword, "from-password", env("NACOS_MIGRATE_FROM_PASSWORD", ""), "its password [NACOS_MIGRATE_FROM_PASSWORD]")
	fs.StringVar(&o.FromMySQL, "from-mysql", "", "Java Nacos's MySQL database, read-only: user:pass@tcp(host:3306)/nacos or jdbc:mysql://host:3306/nacos")
	fs.StringVar(&o.MySQLUser, "mysql-user", "", "MySQL user (with a jdbc: URL)")
	fs.StringVar(&o.MySQLPassword, "mysql-password", env("NACOS_MIGRATE_MYSQL_PASSWORD", ""), "MySQL password [NACOS_MIGRATE_MYSQL_PASSWORD]")
	fromHome := fs.String("from-home", "", "a Java Nacos home: read db.url.0, db.user and db.password from its conf/application.properties (and the MYSQL_* image variables) for -from-mysql")
	tz := fs.String("mysql-time-zone", "", "time zone the Java server ran in, for MySQL DATETIME columns (default: this machine's, or $TZ)")
	fs.StringVar(&o.To, "to", "http://127.0.0.1:8848/nacos", "nacosd base URL with its context path")
	fs.StringVar(&o.ToUser, "to-user", "nacos", "nacosd user with ROLE_ADMIN (needed even with nacosd's auth off)")
	fs.StringVar(&o.ToPassword, "to-password", env("NACOS_MIGRATE_TO_PASSWORD", "nacos"), "its password [NACOS_MIGRATE_TO_PASSWORD]")
	fs.BoolVar(&o.DryRun, "dry-run", false, "read everything and report what would be copied; write nothing")
	fs.DurationVar(&o.Timeout, "timeout", 30*time.Second, "timeout of each HTTP request")
	bridge := fs.Bool("bridge", false, "cut-over mode: copy nothing else, but keep every ephemeral instance registered on both servers while clients move (each instance beaten on one side is registered on the other), until interrupted (docs/migration.md)")
	bridgeEvery := fs.Duration("bridge-interval", 3*time.Second, "how often the bridge looks at both servers")
	fs.Usage = func() {
		fmt.Fprint(stderr, `nacosd migrate: copy a Java Nacos 1.x into a running nacosd.

Reads namespaces, configs (with beta and tag variants and history), users,
roles, permissions, services, clusters and persistent instances; writes
what nacosd lacks or has different, so running it again changes nothing.
Nothing is deleted anywhere. See docs/migration.md.

Usage:
  nacosd migrate -from http://java-nacos:8848/nacos -to http://nacosd:8848/nacos
  nacosd migrate -from http://java-nacos:8848/nacos -from-mysql 'nacos:pw@tcp(db:3306)/nacos' -to ...
  nacosd migrate -from-home /opt/nacos -from http://java-nacos:8848/nacos -to ... -dry-run
  nacosd migrate -bridge -from http://java-nacos:8848/nacos -to ...   (while clients move)

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("migrate: unexpected arguments: %v", fs.Args())
	}
	if *fromHome != "" && o.FromMySQL == "" {
		st, err := settings.Load(settings.Options{Args: []string{"-home", *fromHome}, WorkDir: *fromHome, LookupEnv: lookupEnv})
		if err != nil {
			return fmt.Errorf("migrate: read %s: %w", *fromHome, err)
		}
		if st.DB.Platform != "mysql" || len(st.DB.URLs) == 0 {
			return fmt.Errorf("migrate: %s/conf/application.properties sets no MySQL database (spring.datasource.platform=mysql, db.url.0)", *fromHome)
		}
		o.FromMySQL, o.MySQLUser = st.DB.URLs[0], st.DB.Users[0]
		if o.MySQLPassword == "" {
			o.MySQLPassword = st.DB.Passwords[0]
		}
	}
	if *tz != "" {
		loc, err := time.LoadLocation(*tz)
		if err != nil {
			return fmt.Errorf("migrate: -mysql-time-zone: %w", err)
		}
		o.MySQLLocation = loc
	}
	if *bridge {
		fmt.Fprintln(stderr, "nacosd migrate -bridge: mirroring ephemeral instances between", migrate.RedactURL(o.From), "and", migrate.RedactURL(o.To), "until interrupted")
		return migrate.Bridge(ctx, o, migrate.BridgeOptions{Interval: *bridgeEvery, Report: func(r migrate.BridgeRound) {
			fmt.Fprintf(stderr, "%s %s\n", time.Now().Format("15:04:05"), r)
		}})
	}
	o.Progress = stderr
	if f, ok := stderr.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			o.Terminal = true
		}
	}
	sum, err := migrate.Run(ctx, o)
	if sum != nil {
		sum.Print(stdout)
	}
	if err != nil {
		return err
	}
	if n := len(sum.Skips()); n > 0 {
		return fmt.Errorf("migrate: %d records were not copied (listed above)", n)
	}
	return nil
}
