// Package settings builds a nacosd server.Config the way Java Nacos 1.4.8
// finds its configuration: nacos.home with conf/application.properties and
// conf/cluster.conf, -Dkey=value options, Spring Boot's relaxed environment
// names (SERVER_PORT, NACOS_CORE_AUTH_ENABLED, …) and the variables of the
// nacos/nacos-server docker image (MODE, NACOS_SERVERS, NACOS_AUTH_*, …),
// in Spring Boot's order of precedence, plus nacosd's own flags. See
// DESIGN.md.
package settings

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nacosd/nacosd/server"
)

// Options are the process inputs Load reads.
type Options struct {
	// Args are the command-line arguments without the program name.
	Args []string
	// LookupEnv reads the environment (os.LookupEnv); nil: no environment.
	LookupEnv func(string) (string, bool)
	// WorkDir is the working directory: the default nacos.home.
	WorkDir string
	// Output receives --help (stdout); errors are returned instead.
	Output io.Writer
	// Interfaces overrides the network interfaces used to pick the
	// advertised address (tests); nil reads the system's.
	Interfaces []iface
}

// Settings is the result of Load.
type Settings struct {
	// Config is the server configuration; Logger and Clock are left at
	// server.DefaultConfig's values for the caller to replace.
	Config server.Config
	// LogLevel is nacosd.log-level.
	LogLevel slog.Level
	// Notes are the start-up decisions, one log line each.
	Notes []Note
	// Warnings are said once at start-up.
	Warnings []string
	// DB is Java's external database configuration (spring.datasource.platform,
	// db.*), which nacosd does not use itself; nacosd migrate reads it.
	DB DB
	// FunctionMode is nacos.functionMode ("" when unset).
	FunctionMode string
	// PprofAddr is nacosd.pprof-addr: where main serves net/http/pprof
	// ("" for nowhere).
	PprofAddr string
}

// Note is a start-up decision: a message and slog key/value pairs.
type Note struct {
	Msg  string
	Args []any
}

// DB is Java Nacos's external database configuration.
type DB struct {
	Platform  string // spring.datasource.platform ("" or "mysql")
	URLs      []string
	Users     []string
	Passwords []string
}

// ErrHelp is returned by Load after printing --help.
var ErrHelp = flag.ErrHelp

// flagProps maps nacosd's flags to the property each one sets.
var flagProps = []struct {
	flag, prop, env, usage string
	isBool                 bool
}{
	{"home", "nacos.home", "NACOS_HOME", "nacos.home: conf/application.properties, conf/cluster.conf, logs/ and (by default) data/ live here (default: the working directory)", false},
	{"port", "server.port", "SERVER_PORT, NACOS_APPLICATION_PORT, NACOS_SERVER_PORT", "HTTP port (server.port, default 8848); raft uses port-1000", false},
	{"host", "server.address", "SERVER_ADDRESS, NACOSD_HOST", "HTTP listen address (server.address); empty = all interfaces", false},
	{"ip", "nacos.server.ip", "NACOS_SERVER_IP, NACOSD_IP", "address this node advertises (nacos.server.ip); default: nacos.inetutils.* rules", false},
	{"context-path", "server.servlet.contextPath", "SERVER_SERVLET_CONTEXTPATH, NACOSD_CONTEXT_PATH", "context path (server.servlet.contextPath, default /nacos); / for none", false},
	{"data-dir", "nacosd.data-dir", "NACOSD_DATA_DIR", "data directory: raft log and snapshots (nacosd.data-dir, default <home>/data)", false},
	{"raft-addr", "nacosd.raft-addr", "NACOSD_RAFT_ADDR", "raft bind address (nacosd.raft-addr, default 127.0.0.1:<port-1000>)", false},
	{"push-addr", "nacosd.push-addr", "NACOSD_PUSH_ADDR", "UDP push socket bind address (nacosd.push-addr, default :0)", false},
	{"java-push-timing", "nacosd.java-push-timing", "NACOSD_JAVA_PUSH_TIMING", "push changes 1 s after they happen, as Java Nacos (default: first change at once, then at most one push per second per service)", true},
	{"log-level", "nacosd.log-level", "NACOSD_LOG_LEVEL", "log level: debug, info, warn, error (nacosd.log-level, default info)", false},
	{"grpc-transport", "nacosd.grpc.transport", "NACOSD_GRPC_TRANSPORT", "the Nacos 2.x gRPC server: lean (server/grpcwire, one goroutine per connection) or grpc-go (nacosd.grpc.transport, default lean)", false},
	{"pprof-addr", "nacosd.pprof-addr", "NACOSD_PPROF_ADDR", "serve Go's net/http/pprof profiles on this address, e.g. 127.0.0.1:6060 (nacosd.pprof-addr, default off)", false},
}

// envAliases are nacosd's own environment names of Java properties.
var envAliases = map[string][]string{
	"server.port":                {"NACOSD_PORT"},
	"server.address":             {"NACOSD_HOST"},
	"nacos.server.ip":            {"NACOSD_IP"},
	"server.servlet.contextPath": {"NACOSD_CONTEXT_PATH"},
	"nacos.home":                 {"NACOSD_HOME"},
	// the name operators try (Java's image has none: 2.4+ asks for the
	// admin password at the first login instead)
	"nacosd.auth.admin-password": {"NACOS_AUTH_ADMIN_PASSWORD"},
}

// Load reads the configuration. It returns ErrHelp after printing the
// usage for -h/--help, and an error naming the property (and where its
// value came from) for a malformed value of a property nacosd uses.
func Load(o Options) (*Settings, error) {
	if o.LookupEnv == nil {
		o.LookupEnv = func(string) (string, bool) { return "", false }
	}
	src := newSources(o.LookupEnv)
	for prop, names := range envAliases {
		src.envAliases[canonical(prop)] = names
	}
	if o.Output == nil {
		o.Output = io.Discard
	}
	if err := parseArgs(o.Args, src, o.Output); err != nil {
		return nil, err
	}
	jvm, err := src.addImageVars()
	if err != nil {
		return nil, err
	}
	r := &reader{src: src}

	// nacos.home and the conf files come first: every other property may
	// be in them.
	home := o.WorkDir
	homeFrom := "working directory"
	if v, ok, err := src.lookup("nacos.home"); err != nil {
		return nil, err
	} else if ok && strings.TrimSpace(v.raw) != "" {
		home, homeFrom = strings.TrimSpace(v.raw), v.from
	}
	if !filepath.IsAbs(home) {
		home = filepath.Join(o.WorkDir, home)
	}
	home = filepath.Clean(home)
	st := &Settings{Config: server.DefaultConfig()}
	st.note("nacos.home", "home", home, "from", homeFrom)
	files := []string{filepath.Join(home, "conf", "application.properties")}
	if v, ok, err := src.lookup("spring.config.location"); err != nil {
		return nil, err
	} else if ok {
		files = configLocations(v.raw)
	}
	if v, ok, err := src.lookup("spring.config.additional-location"); err != nil {
		return nil, err
	} else if ok {
		files = append(files, configLocations(v.raw)...)
	}
	for _, f := range files {
		found, n, err := src.loadFile(f)
		if err != nil {
			return nil, err
		}
		if found {
			st.note("configuration file", "file", f, "properties", n)
		} else {
			st.note("configuration file not found; using defaults and the environment", "file", f)
		}
	}
	if err := r.fill(st, home, o); err != nil {
		return nil, err
	}
	st.warnJavaOnly(src, jvm)
	st.warnUnknown(src)
	return st, nil
}

// parseArgs splits -Dkey=value, Spring's --key=value (a key with a dot)
// and nacosd's flags, and records each in its layer.
func parseArgs(args []string, src *sources, out io.Writer) error {
	fs := flag.NewFlagSet("nacosd", flag.ContinueOnError)
	// the flag package would print the usage on any error: only --help
	// gets it (on out: stdout), an error is returned for stderr
	fs.SetOutput(io.Discard)
	vals := map[string]*string{}
	bools := map[string]*bool{}
	for _, f := range flagProps {
		usage := f.usage + " [" + f.env + "]"
		if f.isBool {
			bools[f.flag] = fs.Bool(f.flag, false, usage)
		} else {
			vals[f.flag] = fs.String(f.flag, "", usage)
		}
	}
	mode := fs.String("mode", "", "standalone or cluster (Java: -Dnacos.standalone=true / startup.sh -m) [MODE, NACOSD_MODE] (default standalone)")
	standalone := fs.Bool("standalone", true, "same as -mode=standalone (Java: -Dnacos.standalone=true)")
	usage := func() {
		fmt.Fprint(out, `nacosd: a Nacos 1.4.8-compatible server (naming /nacos/v1/ns, config /nacos/v1/cs).

Usage: nacosd [flags] [-Dproperty=value ...] [--property=value ...]
       nacosd migrate [flags]   (copy a Java Nacos into nacosd; nacosd migrate -h)
       nacosd gen-secrets       (the properties that turn auth on, with fresh secrets)
       nacosd version           (this build: version, VCS revision and time; also --version)

Configuration is read as Java Nacos reads it, highest precedence first:
flags and --property=value, -Dproperty=value, the nacos/nacos-server image's
variables (MODE, NACOS_SERVERS, NACOS_AUTH_ENABLE, PREFER_HOST_MODE, ...),
environment variables under Spring's names (SERVER_PORT,
NACOS_CORE_AUTH_ENABLED, ...), then <home>/conf/application.properties.
Each flag below names its property and environment variables.

`)
		fs.SetOutput(out)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	fs.Usage = func() {}
	var rest []string
	for _, a := range args {
		if k, v, ok := parseDefine(a); ok {
			src.set(layerSysProp, k, v, "-D"+k)
			continue
		}
		if strings.HasPrefix(a, "--") {
			name := strings.TrimPrefix(a, "--")
			k, v, hasVal := strings.Cut(name, "=")
			if strings.Contains(k, ".") {
				if !hasVal {
					v = ""
				}
				src.set(layerFlag, k, v, "--"+k)
				continue
			}
		}
		rest = append(rest, a)
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage()
			return err
		}
		return fmt.Errorf("%w (nacosd --help lists the flags)", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s (nacosd --help lists the flags and commands)", strings.Join(fs.Args(), " "))
	}
	var modeErr error
	modeSet, standaloneSet := false, false
	fs.Visit(func(f *flag.Flag) {
		for _, fp := range flagProps {
			if fp.flag != f.Name {
				continue
			}
			if fp.isBool {
				src.set(layerFlag, fp.prop, boolText(*bools[f.Name]), "flag -"+f.Name)
			} else {
				src.set(layerFlag, fp.prop, *vals[f.Name], "flag -"+f.Name)
			}
		}
		switch f.Name {
		case "mode":
			modeSet = true
		case "standalone":
			standaloneSet = true
		}
	})
	if modeSet {
		switch *mode {
		case "standalone", "cluster":
			src.set(layerFlag, "nacos.standalone", boolText(*mode == "standalone"), "flag -mode")
		default:
			modeErr = fmt.Errorf("-mode must be standalone or cluster, got %q", *mode)
		}
	}
	if standaloneSet {
		if modeSet && *standalone != (*mode == "standalone") {
			return errors.New("-standalone and -mode disagree")
		}
		src.set(layerFlag, "nacos.standalone", boolText(*standalone), "flag -standalone")
	}
	return modeErr
}

func (st *Settings) note(msg string, args ...any) {
	st.Notes = append(st.Notes, Note{Msg: msg, Args: args})
}

// warnJavaOnly adds the one warning about Java-only settings and the one
// about JVM variables.
func (st *Settings) warnJavaOnly(src *sources, jvm []string) {
	var keys []string
	seen := map[string]bool{}
	for l := layerFlag; l < layerCount; l++ {
		for k, v := range src.layers[l] {
			if javaOnly(k, v.raw) && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	if st.DB.Platform != "" && !seen["spring.datasource.platform"] {
		keys = append(keys, "spring.datasource.platform")
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("Java-only settings ignored: %s. nacosd keeps configs, namespaces, users and persistent instances in its own raft store under %s (no external database, no JRaft tuning); to copy a Java Nacos MySQL database in, run `nacosd migrate -from-mysql`",
			strings.Join(keys, ", "), st.Config.DataDir))
	}
	if len(jvm) > 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("JVM settings ignored: %s (nacosd is not a JVM; its memory is its Go heap)", strings.Join(jvm, ", ")))
	}
	if st.FunctionMode != "" {
		st.Warnings = append(st.Warnings, fmt.Sprintf("nacos.functionMode=%s ignored: nacosd always serves both naming and config", st.FunctionMode))
	}
}

// javaOnly reports properties that only mean something to Java Nacos.
func javaOnly(key, val string) bool {
	switch {
	case strings.HasPrefix(key, "db."), strings.HasPrefix(key, "spring.datasource.") && key != "spring.datasource.platform",
		strings.HasPrefix(key, "nacos.core.protocol.raft."), key == "embeddedstorage":
		return true
	case key == "spring.datasource.platform":
		return platform(val) != ""
	}
	return false
}

// platform normalises spring.datasource.platform: the image's conf gives
// the two characters "" when SPRING_DATASOURCE_PLATFORM is unset.
func platform(v string) string {
	v = strings.ToLower(strings.Trim(strings.TrimSpace(v), `"'`))
	return v
}

// parseBool is Spring's String→Boolean conversion (true/false, on/off,
// yes/no, 1/0, any case, blanks trimmed).
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "on", "yes", "1":
		return true, true
	case "false", "off", "no", "0":
		return false, true
	}
	return false, false
}

func parseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n, err == nil
}

// durationMs formats a millisecond property for notes.
func durationMs(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
