package settings

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeIfs is a host with a loopback, eth0 (index 2) and eth1 (index 3).
var fakeIfs = []iface{
	{index: 1, name: "lo", up: true, loop: true, addrs: []net.IP{net.ParseIP("127.0.0.1")}},
	{index: 2, name: "eth0", up: true, addrs: []net.IP{net.ParseIP("192.168.1.10"), net.ParseIP("192.168.1.11"), net.ParseIP("fe80::1")}},
	{index: 3, name: "eth1", up: true, addrs: []net.IP{net.ParseIP("10.0.0.5")}},
}

type env map[string]string

func (e env) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

// load runs Load with home as working directory, conf as its
// conf/application.properties ("" for none).
func load(t *testing.T, conf string, e env, args ...string) (*Settings, error) {
	t.Helper()
	home := t.TempDir()
	if conf != "" {
		if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "conf", "application.properties"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Load(Options{Args: args, LookupEnv: e.lookup, WorkDir: home, Interfaces: fakeIfs})
}

func mustLoad(t *testing.T, conf string, e env, args ...string) *Settings {
	t.Helper()
	st, err := load(t, conf, e, args...)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestDefaults(t *testing.T) {
	st := mustLoad(t, "", nil)
	c := st.Config
	if c.Port != 8848 || c.ContextPath != "/nacos" || !c.Standalone || c.IP != "192.168.1.11" || c.Host != "" {
		t.Errorf("defaults: port %d cp %q standalone %v ip %q host %q", c.Port, c.ContextPath, c.Standalone, c.IP, c.Host)
	}
	if c.DataDir != filepath.Join(c.Home, "data") || c.ClusterConf != filepath.Join(c.Home, "conf", "cluster.conf") {
		t.Errorf("dirs: data %q cluster.conf %q home %q", c.DataDir, c.ClusterConf, c.Home)
	}
	a := c.Auth
	if a.Enabled || !a.SecretKeyDefault || a.TokenExpire != 18000*time.Second || !a.Caching || !a.UserAgentAuthWhite {
		t.Errorf("auth defaults: %+v", a)
	}
	if st.Config.Ops.ExposePrometheus || st.Config.Ops.AccessLog.Enabled || len(st.Warnings) != 0 {
		t.Errorf("ops defaults: prometheus %v accesslog %v warnings %v", st.Config.Ops.ExposePrometheus, st.Config.Ops.AccessLog.Enabled, st.Warnings)
	}
}

// TestJavaDistributionConf reads a conf laid out like the Java
// distribution's: the properties nacosd uses apply, the Java-only ones
// give one warning.
func TestJavaDistributionConf(t *testing.T) {
	conf := `#*************** Spring Boot Related Configurations ***************#
server.servlet.contextPath=/nacos
server.error.include-message=ALWAYS
server.port=8849
#spring.datasource.platform=mysql
# db.num=1
db.pool.config.connectionTimeout=30000
db.pool.config.maximumPoolSize=20
nacos.naming.empty-service.auto-clean=true
nacos.naming.empty-service.clean.initial-delay-ms=50000
nacos.naming.empty-service.clean.period-time-ms=30000
management.metrics.export.elastic.enabled=false
server.tomcat.accesslog.enabled=true
server.tomcat.accesslog.pattern=%h %l %u %t "%r" %s %b %D %{User-Agent}i %{Request-Source}i
server.tomcat.basedir=file:.
nacos.core.auth.system.type=nacos
nacos.core.auth.enabled=false
nacos.core.auth.default.token.expire.seconds=18000
nacos.core.auth.caching.enabled=true
nacos.core.auth.enable.userAgentAuthWhite=false
nacos.core.auth.server.identity.key=
nacos.core.auth.server.identity.value=
nacos.istio.mcp.server.enabled=false
`
	st := mustLoad(t, conf, nil)
	if st.Config.Port != 8849 || st.Config.Auth.SystemType != "nacos" || st.Config.Auth.UserAgentAuthWhite {
		t.Errorf("port %d auth %+v", st.Config.Port, st.Config.Auth)
	}
	if !st.Config.Ops.AccessLog.Enabled || !strings.HasPrefix(st.Config.Ops.AccessLog.Pattern, "%h %l %u %t") || st.Config.Ops.AccessLog.Dir != filepath.Join(st.Config.Home, "logs") {
		t.Errorf("access log %+v", st.Config.Ops.AccessLog)
	}
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "db.pool.config.connectiontimeout") || !strings.Contains(st.Warnings[0], "nacosd migrate") {
		t.Errorf("warnings %q", st.Warnings)
	}
}

// TestPrecedence checks Spring Boot's order: flag > --prop > -D > image
// script variables > environment > conf file > image variables > default.
func TestPrecedence(t *testing.T) {
	conf := "server.port=1001\n"
	cases := []struct {
		name string
		env  env
		args []string
		want int
	}{
		{"file", nil, nil, 1001},
		{"image variable below file", env{"NACOS_APPLICATION_PORT": "1002"}, nil, 1001},
		{"env over file", env{"SERVER_PORT": "1003"}, nil, 1003},
		{"nacosd env alias", env{"NACOSD_PORT": "1004"}, nil, 1004},
		{"-D over env", env{"SERVER_PORT": "1003"}, []string{"-Dserver.port=1005"}, 1005},
		{"--prop over -D", nil, []string{"-Dserver.port=1005", "--server.port=1006"}, 1006},
		{"flag", env{"SERVER_PORT": "1003"}, []string{"-Dserver.port=1005", "-port", "1007"}, 1007},
		{"JAVA_OPT_EXT -D", env{"JAVA_OPT_EXT": "-Xmx1g -Dserver.port=1008"}, nil, 1008},
	}
	for _, c := range cases {
		st, err := load(t, conf, c.env, c.args...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if st.Config.Port != c.want {
			t.Errorf("%s: port %d, want %d", c.name, st.Config.Port, c.want)
		}
	}
	// without a conf file the image variables apply directly
	if st := mustLoad(t, "", env{"NACOS_APPLICATION_PORT": "1002", "NACOS_SERVER_PORT": "1"}); st.Config.Port != 1002 {
		t.Errorf("NACOS_APPLICATION_PORT without conf: %d", st.Config.Port)
	}
	if st := mustLoad(t, "", env{"NACOS_SERVER_PORT": "1009"}); st.Config.Port != 1009 {
		t.Errorf("NACOS_SERVER_PORT without conf: %d", st.Config.Port)
	}
}

// TestImageConf reads the docker image's conf/application.properties with
// the nacos/nacos-server variables of an nacos-docker env file.
func TestImageConf(t *testing.T) {
	b, err := os.ReadFile("../../docker/nacosd/conf/application.properties")
	if err != nil {
		t.Fatal(err)
	}
	e := env{
		"MODE": "standalone", "PREFER_HOST_MODE": "hostname", "NACOS_APPLICATION_PORT": "8850",
		"NACOS_AUTH_ENABLE": "true", "NACOS_AUTH_TOKEN": "c2VjcmV0LWtleS1vZi1hdC1sZWFzdC0zMi1ieXRlcy0tLS0=",
		"NACOS_AUTH_IDENTITY_KEY": "2222", "NACOS_AUTH_IDENTITY_VALUE": "2xxx", "NACOS_AUTH_TOKEN_EXPIRE_SECONDS": "600",
		"SPRING_DATASOURCE_PLATFORM": "mysql", "MYSQL_SERVICE_HOST": "mysql", "MYSQL_SERVICE_DB_NAME": "nacos_devtest",
		"MYSQL_SERVICE_USER": "nacos", "MYSQL_SERVICE_PASSWORD": "pw", "JVM_XMS": "1g", "JVM_XMX": "1g",
	}
	st := mustLoad(t, string(b), e)
	c := st.Config
	host, _ := os.Hostname()
	if c.Port != 8850 || c.ContextPath != "/nacos" || !c.Standalone || c.IP != host {
		t.Errorf("port %d cp %q standalone %v ip %q", c.Port, c.ContextPath, c.Standalone, c.IP)
	}
	a := c.Auth
	if !a.Enabled || a.SecretKeyDefault || a.SecretKey != e["NACOS_AUTH_TOKEN"] || a.ServerIdentityKey != "2222" ||
		a.ServerIdentityValue != "2xxx" || a.TokenExpire != 600*time.Second || a.Caching || a.UserAgentAuthWhite || a.SystemType != "nacos" {
		t.Errorf("auth %+v", a)
	}
	if st.DB.Platform != "mysql" || len(st.DB.URLs) != 1 || !strings.HasPrefix(st.DB.URLs[0], "jdbc:mysql://mysql:3306/nacos_devtest?") || st.DB.Users[0] != "nacos" || st.DB.Passwords[0] != "pw" {
		t.Errorf("db %+v", st.DB)
	}
	if len(st.Warnings) != 2 || !strings.Contains(st.Warnings[0], "spring.datasource.platform") || !strings.Contains(st.Warnings[1], "JVM_XMS, JVM_XMX") {
		t.Errorf("warnings %q", st.Warnings)
	}
	// the image's defaults: auth off, caching off, no secret key
	st = mustLoad(t, string(b), env{"MODE": "standalone"})
	if st.Config.Auth.Enabled || st.Config.Auth.SecretKey != "" || len(st.Warnings) != 0 {
		t.Errorf("image defaults: auth %+v warnings %q", st.Config.Auth, st.Warnings)
	}
	if st := mustLoad(t, string(b), env{"MODE": "cluster", "NACOS_SERVERS": "nacos1:8848 nacos2:8848  nacos3:8848"}); st.Config.Standalone || strings.Join(st.Config.NacosServers, ",") != "nacos1:8848,nacos2:8848,nacos3:8848" {
		t.Errorf("cluster: standalone %v servers %q", st.Config.Standalone, st.Config.NacosServers)
	}
}

func TestMode(t *testing.T) {
	for _, c := range []struct {
		env  env
		args []string
		want bool
	}{
		{nil, nil, true},
		{env{"MODE": "cluster"}, nil, false},
		{env{"MODE": "cluster"}, []string{"-standalone"}, true},
		{env{"MODE": "standalone", "NACOSD_MODE": "cluster"}, nil, false},
		{nil, []string{"-mode", "cluster"}, false},
		{nil, []string{"-Dnacos.standalone=false"}, false},
		{env{"MODE": "cluster"}, []string{"-Dnacos.standalone=true"}, true},
	} {
		st, err := load(t, "", c.env, c.args...)
		if err != nil || st.Config.Standalone != c.want {
			t.Errorf("%v %v: standalone %v err %v, want %v", c.env, c.args, st != nil && st.Config.Standalone, err, c.want)
		}
	}
}

func TestMembersAndAddress(t *testing.T) {
	st := mustLoad(t, "nacos.member.list=a:8848, b:8848,,c\n", env{"MODE": "cluster"})
	if strings.Join(st.Config.MemberList, "|") != "a:8848|b:8848|c" || st.Config.NacosServers != nil {
		t.Errorf("member list %q servers %q", st.Config.MemberList, st.Config.NacosServers)
	}
	for _, c := range []struct {
		conf, want string
		e          env
	}{
		{"nacos.inetutils.ip-address=10.1.2.3\n", "10.1.2.3", nil},
		{"nacos.inetutils.ip-address=10.1.2.3\n", "10.9.9.9", env{"NACOS_SERVER_IP": "10.9.9.9"}},
		{"nacos.inetutils.preferred-networks=10.0\n", "10.0.0.5", nil},
		{"nacos.inetutils.preferred-networks[0]=192.168.1.10\n", "192.168.1.10", nil},
		{"nacos.inetutils.ignored-interfaces=eth0\n", "10.0.0.5", nil},
		{"", "10.0.0.5", env{"IGNORED_INTERFACES": "eth.*0"}},
	} {
		st, err := load(t, c.conf, c.e)
		if err != nil || st.Config.IP != c.want {
			t.Errorf("%q %v: ip %v err %v, want %s", c.conf, c.e, st, err, c.want)
		}
	}
}

// TestMalformed: a bad value of a property nacosd uses is an error naming
// the property and where it came from.
func TestMalformed(t *testing.T) {
	for _, c := range []struct {
		conf string
		e    env
		args []string
		want string
	}{
		{"server.port=eighty\n", nil, nil, "server.port (from "},
		{"server.port=70000\n", nil, nil, "server.port"},
		{"", env{"NACOS_CORE_AUTH_ENABLED": "treu"}, nil, "nacos.core.auth.enabled (from env NACOS_CORE_AUTH_ENABLED)"},
		{"nacos.core.auth.default.token.expire.seconds=soon\n", nil, nil, "nacos.core.auth.default.token.expire.seconds"},
		{"server.servlet.contextPath=nacos\n", nil, nil, "server.servlet.contextPath"},
		{"nacos.server.ip=not_an/address\n", nil, nil, "is not ip"},
		{"server.port=${NOPE}\n", nil, nil, "could not resolve placeholder 'NOPE'"},
		{"nacos.naming.expireInstance=maybe\n", nil, nil, "nacos.naming.expireInstance"},
		{"nacos.config.retention.days=0\n", nil, nil, "nacos.config.retention.days"},
		{"nacos.core.member.lookup.type=dns\n", nil, nil, "nacos.core.member.lookup.type"},
		{"", env{"MODE": "production"}, nil, "MODE must be standalone or cluster"},
		{"", nil, []string{"-mode", "both"}, "-mode"},
		{"", env{"NACOSD_LOG_LEVEL": "loud"}, nil, "nacosd.log-level"},
		{"bad=\\uZZZZ\n", nil, nil, "malformed"},
		{"nacosd.push.trusted-sources=10.0.0.0/33\n", nil, nil, "nacosd.push.trusted-sources"},
		{"", env{"NACOSD_PUSH_TRUSTED_SOURCES": "proxy.example"}, nil, "nacosd.push.trusted-sources (from env"},
	} {
		_, err := load(t, c.conf, c.e, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %v %v: err %v, want it to contain %q", c.conf, c.e, c.args, err, c.want)
		}
	}
}

// nacosd.push.trusted-sources: addresses and ranges whose subscriptions
// are pushed to the clientIP they name (issue 26 item 9).
func TestPushTrustedSources(t *testing.T) {
	if got := mustLoad(t, "", nil).Config.Push.TrustedSources; len(got) != 0 {
		t.Fatalf("default: %v", got)
	}
	st := mustLoad(t, "nacosd.push.trusted-sources=10.1.0.0/16, 192.168.1.5 ,::1\n", nil)
	if got := fmt.Sprint(st.Config.Push.TrustedSources); got != "[10.1.0.0/16 192.168.1.5/32 ::1/128]" {
		t.Fatalf("conf: %s", got)
	}
	st = mustLoad(t, "", env{"NACOSD_PUSH_TRUSTED_SOURCES": "172.16.0.0/12"})
	if got := fmt.Sprint(st.Config.Push.TrustedSources); got != "[172.16.0.0/12]" {
		t.Fatalf("env: %s", got)
	}
}

// nacosd.auth.admin-password, also as NACOS_AUTH_ADMIN_PASSWORD (issue 26
// item 12).
func TestAdminPasswordSetting(t *testing.T) {
	for _, c := range []struct {
		conf string
		e    env
	}{
		{"nacosd.auth.admin-password=Conf-pw-1\n", nil},
		{"", env{"NACOSD_AUTH_ADMIN_PASSWORD": "Conf-pw-1"}},
		{"", env{"NACOS_AUTH_ADMIN_PASSWORD": "Conf-pw-1"}},
	} {
		if got := mustLoad(t, c.conf, c.e).Config.Auth.AdminPassword; got != "Conf-pw-1" {
			t.Errorf("%q %v: %q", c.conf, c.e, got)
		}
	}
	if got := mustLoad(t, "", nil).Config.Auth.AdminPassword; got != "" {
		t.Errorf("default: %q", got)
	}
}

func TestHelp(t *testing.T) {
	var out strings.Builder
	_, err := Load(Options{Args: []string{"-h"}, Output: &out, WorkDir: t.TempDir()})
	if !errors.Is(err, ErrHelp) {
		t.Fatalf("err %v", err)
	}
	for _, s := range []string{"-home", "NACOS_HOME", "server.port", "NACOS_APPLICATION_PORT", "-Dproperty=value", "migrate"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("help lacks %s", s)
		}
	}
}

func TestExposureAndAdditionalLocation(t *testing.T) {
	dir := t.TempDir()
	extra := filepath.Join(dir, "application.properties")
	if err := os.WriteFile(extra, []byte("management.endpoints.web.exposure.include=health,prometheus\nserver.port=1234\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := mustLoad(t, "server.port=1\n", nil, "--spring.config.additional-location=file:"+dir+"/")
	if !st.Config.Ops.ExposePrometheus || st.Config.Port != 1234 {
		t.Errorf("prometheus %v port %d", st.Config.Ops.ExposePrometheus, st.Config.Port)
	}
	st = mustLoad(t, "", env{"MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE": "*", "MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_EXCLUDE": "prometheus"})
	if st.Config.Ops.ExposePrometheus {
		t.Error("excluded prometheus exposed")
	}
}

// TestNacos2TokenSettings: a Java Nacos 2.x application.properties names the
// token secret and lifetime nacos.core.auth.plugin.nacos.token.*; nacosd
// reads them (an empty 2.x secret, as shipped, leaves the 1.x name in force).
func TestNacos2TokenSettings(t *testing.T) {
	const key = "Y2x1c3Rlci1hdXRoLXRlc3Qtc2VjcmV0LTAxMjM0NTY3ODk="
	st, err := load(t, "nacos.core.auth.plugin.nacos.token.secret.key="+key+"\nnacos.core.auth.plugin.nacos.token.expire.seconds=600\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Config.Auth.SecretKey != key || st.Config.Auth.TokenExpire != 10*time.Minute {
		t.Fatalf("2.x names: secret %q expire %s", st.Config.Auth.SecretKey, st.Config.Auth.TokenExpire)
	}
	st, err = load(t, "nacos.core.auth.plugin.nacos.token.secret.key=\nnacos.core.auth.default.token.secret.key="+key+"\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Config.Auth.SecretKey != key {
		t.Fatalf("empty 2.x secret: %q", st.Config.Auth.SecretKey)
	}
}

// TestGRPCSettings: the gRPC port offset and the inbound message limit.
func TestGRPCSettings(t *testing.T) {
	st := mustLoad(t, "", nil)
	if st.Config.GRPC.PortOffset != 1000 || st.Config.GRPC.MaxRecvMsgSize != 10<<20 {
		t.Fatalf("defaults: %+v", st.Config.GRPC)
	}
	st = mustLoad(t, "nacos.server.grpc.port.offset=2000\nnacos.remote.server.grpc.sdk.max-inbound-message-size=1048576\n", nil)
	if st.Config.GRPC.PortOffset != 2000 || st.Config.GRPC.MaxRecvMsgSize != 1<<20 {
		t.Fatalf("set: %+v", st.Config.GRPC)
	}
	if _, err := load(t, "nacos.server.grpc.port.offset=far\n", nil); err == nil || !strings.Contains(err.Error(), "nacos.server.grpc.port.offset") {
		t.Fatalf("bad offset: %v", err)
	}
}
