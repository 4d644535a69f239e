package server

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/nacosd/nacosd/internal/buildinfo"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/naming"
	"github.com/nacosd/nacosd/server/push"
)

// Config configures a node.
type Config struct {
	// Host and Port are the HTTP listen address (Java Nacos: all interfaces,
	// 8848). Port 0 picks a free port (tests).
	Host string
	Port int
	// IP is the address this node advertises (member ip); empty: the first
	// non-loopback IPv4 address, else 127.0.0.1.
	IP string
	// ContextPath is the URL prefix, "/nacos" by default; "/" or "" means none.
	ContextPath string
	// DataDir holds the raft log, snapshots and stable store.
	DataDir string
	// Standalone runs a one-node cluster; otherwise the members come from
	// NacosServers, ClusterConf or MemberList.
	Standalone bool
	// RaftAddr is the raft TCP bind address (default 127.0.0.1:<port-1000>).
	RaftAddr string
	// Naming configures the naming registry and Push the UDP push service
	// (Push.ListenAddr is the push socket, ":0" by default). Both are passed
	// through whole: zero fields mean the component's defaults; the
	// collaborators (store, pusher, renderer) are set by Start, and a nil
	// Clock or Logger is this Config's. With Push.SubscriberTTL and
	// SubscriberTTLFunc unset, subscribers live for the
	// defaultPushCacheMillis switch, as in Java.
	Naming naming.Config
	Push   push.Config
	// JavaPushTiming pushes every change 1 s after it as Java Nacos does;
	// by default the first change of a quiet service is pushed at once and
	// later ones are coalesced into one push per second.
	JavaPushTiming bool
	// FastRaft shortens raft timings (tests): 50 ms, or RaftTimeout when
	// set (several nodes on a loaded machine, the race detector on, need
	// more to keep a leader).
	FastRaft    bool
	RaftTimeout time.Duration
	// ClusterTimings shortens the cluster protocols' periods (tests); zero
	// fields mean the defaults.
	ClusterTimings ClusterTimings
	// HeaderTimeout closes a connection whose request has not fully
	// arrived within it (default 20 s, Tomcat's connectionTimeout).
	HeaderTimeout time.Duration
	// MaxConns caps client connections (default: the descriptor limit
	// minus a reserve); the last 5% serve only health and node calls.
	MaxConns int
	// MaxConnsPerSource caps the connections of one client address
	// (0: a quarter of MaxConns; negative: none; 127.0.0.1 and ::1 are
	// not limited). server/limits.go.
	MaxConnsPerSource int
	Clock             clock.Clock
	Logger            *slog.Logger
	// Build is the running binary's build (version, VCS revision): logged,
	// in metrics (nacosd_build_info), in /v1/console/server/state and the
	// console. DefaultConfig reads it; zero means unknown.
	Build buildinfo.Info

	// The fields below come from the Java-style configuration (package
	// server/settings: conf/application.properties, -D flags, Spring's
	// environment names, the nacos/nacos-server image's variables).

	// Home is nacos.home: conf/ and logs/ live under it. Empty in tests.
	Home string
	// ClusterConf is the path of <Home>/conf/cluster.conf; it need not exist.
	ClusterConf string
	// MemberList is nacos.member.list split on commas, blanks trimmed and
	// empty entries dropped. Java reads it only when cluster.conf does not
	// exist (console-auth-core-v1.md §4.4).
	MemberList []string
	// NacosServers is the nacos/nacos-server image's NACOS_SERVERS split on
	// blanks. The image writes it into cluster.conf when it starts in
	// cluster mode, so when set it stands for the file's entries.
	NacosServers []string
	// MemberLookup is nacos.core.member.lookup.type: "" (auto), "file" or
	// "address-server".
	MemberLookup string
	// Auth holds the nacos.core.auth.* properties.
	Auth AuthConfig
	// ConfigMaxContent is maxContent (0: Java's 10485760).
	ConfigMaxContent int
	// ConfigRetentionDays is nacos.config.retention.days (0: Java's 30).
	ConfigRetentionDays int
	// SnowflakeWorkerID is nacos.core.snowflake.worker-id; nil derives it
	// from the advertised IP as Java does.
	SnowflakeWorkerID *int64
	// Ops configures the actuator endpoints and the access log (ops.go).
	Ops OpsConfig
	// GRPC configures the Nacos 2.x gRPC edge (grpc.go).
	GRPC GRPCConfig
}

// ClusterTimings are the periods of the node-to-node protocols.
type ClusterTimings struct {
	// ReportDelay and ReportInterval: member reports (5 s, then every 2 s).
	ReportDelay, ReportInterval time.Duration
	// SyncDelay: Distro's coalescing window of a changed list (100 ms).
	SyncDelay time.Duration
	// VerifyInterval: Distro checksum and service status rounds (5 s).
	VerifyInterval time.Duration
	// LoadWait: how long a starting node waits for a peer's data (10 s).
	LoadWait time.Duration
	// BootstrapWait: how long a first start waits to hear from every
	// member before it fixes the raft voter set (10 s).
	BootstrapWait time.Duration
}

func (t ClusterTimings) bootstrapWait() time.Duration {
	if t.BootstrapWait > 0 {
		return t.BootstrapWait
	}
	return 10 * time.Second
}

// Settings converts the properties for the auth service, which refuses
// (with auth enabled) the published default secret, short keys and empty
// or published identities.
func (a AuthConfig) Settings() auth.Settings {
	return auth.Settings{Enabled: a.Enabled, SystemType: a.SystemType, TokenSecret: a.SecretKey, TokenExpire: a.TokenExpire,
		IdentityKey: a.ServerIdentityKey, IdentityValue: a.ServerIdentityValue, CachingEnabled: a.Caching,
		UserAgentAuthWhite: a.UserAgentAuthWhite, AdminPassword: a.AdminPassword}
}

// AuthConfig is nacos.core.auth.* as Java Nacos 1.4.8 reads it
// (console-auth-core-v1.md §3.1), unvalidated: the auth service decides
// what it accepts.
type AuthConfig struct {
	// Enabled is nacos.core.auth.enabled (default false).
	Enabled bool
	// SystemType is nacos.core.auth.system.type ("nacos" when shipped,
	// "" in code).
	SystemType string
	// SecretKey is nacos.core.auth.default.token.secret.key, the Base64 text
	// of the HMAC key exactly as configured. With no source setting it, it is
	// the key of the console jar's classpath application.properties, which
	// is what Java 1.4.8 uses then; the nacos/nacos-server image sets it to
	// $NACOS_AUTH_TOKEN, empty when that is unset.
	SecretKey string
	// SecretKeyDefault reports that SecretKey is that published default.
	SecretKeyDefault bool
	// TokenExpire is nacos.core.auth.default.token.expire.seconds (18000 s).
	TokenExpire time.Duration
	// Caching is nacos.core.auth.caching.enabled (default true).
	Caching bool
	// UserAgentAuthWhite is nacos.core.auth.enable.userAgentAuthWhite: true
	// when the property is absent, false in the shipped conf.
	UserAgentAuthWhite bool
	// ServerIdentityKey and ServerIdentityValue are
	// nacos.core.auth.server.identity.key/value.
	ServerIdentityKey, ServerIdentityValue string
	// AdminPassword is nacosd.auth.admin-password
	// (NACOSD_AUTH_ADMIN_PASSWORD, NACOS_AUTH_ADMIN_PASSWORD): the
	// password of the built-in user nacos, set at first start and while
	// nacos still has the default one.
	AdminPassword string
}

// DefaultConfig returns Java Nacos's defaults: port 8848, /nacos, ./data.
func DefaultConfig() Config {
	return Config{Host: "", Port: 8848, ContextPath: "/nacos", DataDir: "data", Standalone: true,
		Clock: clock.Real{}, Logger: slog.Default(), Build: buildinfo.Read()}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.Port < 0 || c.Port > 65535:
		return fmt.Errorf("server: port must be 0..65535, got %d", c.Port)
	case c.DataDir == "":
		return errors.New("server: data dir is empty")
	case c.ContextPath != "" && !strings.HasPrefix(c.ContextPath, "/"):
		return fmt.Errorf("server: context path must start with '/', got %q", c.ContextPath)
	case c.Logger == nil || c.Clock == nil:
		return errors.New("server: Logger and Clock must be set")
	}
	if !c.Standalone && len(c.NacosServers) == 0 && len(c.MemberList) == 0 {
		if _, err := os.Stat(c.ClusterConf); c.ClusterConf == "" || err != nil {
			return fmt.Errorf("server: cluster mode needs its members: write %s (one ip:port per line), or set NACOS_SERVERS or nacos.member.list", orText(c.ClusterConf, "conf/cluster.conf under the Nacos home"))
		}
	}
	if err := c.Auth.Settings().Validate(); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
