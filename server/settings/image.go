package settings

import (
	"fmt"
	"sort"
	"strings"
)

// The nacos/nacos-server:v1.4.x image passes its variables to Java in two
// ways (nacos-group/nacos-docker, build/bin/docker-startup.sh and
// build/conf/application.properties at tag v1.4.8):
//
//   - docker-startup.sh turns some into -D options: they rank as Java
//     system properties, below -D options given explicitly (JAVA_OPT_EXT
//     comes after them on the java command line);
//   - the image's conf/application.properties names the others in
//     placeholders (server.port=${NACOS_APPLICATION_PORT:8848}).
//
// nacosd reads the first kind the same way (layerScript). The second kind
// it applies both through the placeholders of the image's conf (the repo's
// docker/conf/application.properties has them too) and, when no conf file
// sets the property, directly (layerImage), so the variables work with a
// conf directory that is mounted over the image's.

// scriptVars maps docker-startup.sh's variables to the system property it
// sets; the function turns the variable's value into the property's value
// ("" skips it).
var scriptVars = []struct {
	env, prop string
	conv      func(string) (string, error)
}{
	{"MODE", "nacos.standalone", modeConv("MODE")},
	{"NACOSD_MODE", "nacos.standalone", modeConv("NACOSD_MODE")},
	{"NACOS_AUTH_ENABLE", "nacos.core.auth.enabled", same},
	{"NACOS_SERVER_IP", "nacos.server.ip", same},
	{"PREFER_HOST_MODE", "nacos.preferHostnameOverIp", func(v string) (string, error) {
		switch v {
		case "hostname":
			return "true", nil
		case "", "ip":
			return "", nil
		}
		return "", fmt.Errorf("PREFER_HOST_MODE must be hostname or ip, got %q", v)
	}},
	{"FUNCTION_MODE", "nacos.functionMode", func(v string) (string, error) {
		switch v {
		case "config", "naming":
			return v, nil
		case "", "all":
			return "", nil
		}
		return "", fmt.Errorf("FUNCTION_MODE must be all, config or naming, got %q", v)
	}},
	{"USE_ONLY_SITE_INTERFACES", "nacos.inetutils.use-only-site-local-interfaces", same},
	{"PREFERRED_NETWORKS", "nacos.inetutils.preferred-networks", same},
	{"IGNORED_INTERFACES", "nacos.inetutils.ignored-interfaces", same},
	{"EMBEDDED_STORAGE", "embeddedStorage", func(v string) (string, error) {
		if v == "embedded" {
			return "true", nil
		}
		return "", nil
	}},
	{"MEMBER_LIST", "nacos.member.list", same},
}

// modeConv reads MODE as docker-startup.sh does, except that a value other
// than standalone or cluster is refused rather than taken as cluster.
func modeConv(name string) func(string) (string, error) {
	return func(v string) (string, error) {
		switch strings.TrimSpace(v) {
		case "":
			return "", nil
		case "standalone":
			return "true", nil
		case "cluster":
			return "false", nil
		}
		return "", fmt.Errorf("%s must be standalone or cluster, got %q", name, v)
	}
}

// imageVars maps the variables named in the image's application.properties
// placeholders to their property.
var imageVars = []struct{ env, prop string }{
	{"NACOS_APPLICATION_PORT", "server.port"},
	{"NACOS_AUTH_SYSTEM_TYPE", "nacos.core.auth.system.type"},
	{"NACOS_AUTH_TOKEN_EXPIRE_SECONDS", "nacos.core.auth.default.token.expire.seconds"},
	{"NACOS_AUTH_TOKEN", "nacos.core.auth.default.token.secret.key"},
	{"NACOS_AUTH_CACHE_ENABLE", "nacos.core.auth.caching.enabled"},
	{"NACOS_AUTH_USER_AGENT_AUTH_WHITE_ENABLE", "nacos.core.auth.enable.userAgentAuthWhite"},
	{"NACOS_AUTH_IDENTITY_KEY", "nacos.core.auth.server.identity.key"},
	{"NACOS_AUTH_IDENTITY_VALUE", "nacos.core.auth.server.identity.value"},
	{"TOMCAT_ACCESSLOG_ENABLED", "server.tomcat.accesslog.enabled"},
	{"MYSQL_DATABASE_NUM", "db.num"},
	{"MYSQL_SERVICE_USER", "db.user"},
	{"MYSQL_SERVICE_PASSWORD", "db.password"},
}

// jvmVars are the image's JVM variables; nacosd is not a JVM.
var jvmVars = []string{"JVM_XMS", "JVM_XMX", "JVM_XMN", "JVM_MS", "JVM_MMS", "NACOS_DEBUG", "JAVA_OPT"}

func same(v string) (string, error) { return v, nil }

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// addImageVars fills layerScript and layerImage from the environment and
// returns the JVM-only variables that are set (for the one warning).
func (s *sources) addImageVars() (jvm []string, err error) {
	for _, m := range scriptVars { // later entries win (NACOSD_MODE over MODE)
		if v, ok := s.getenv(m.env); ok {
			pv, err := m.conv(v)
			if err != nil {
				return nil, fmt.Errorf("settings: %w", err)
			}
			if pv != "" {
				s.set(layerScript, m.prop, pv, "env "+m.env)
			}
		}
	}
	for _, m := range imageVars {
		if v, ok := s.getenv(m.env); ok {
			s.set(layerImage, m.prop, v, "env "+m.env)
		}
	}
	if _, ok := s.layers[layerImage][canonical("server.port")]; !ok {
		// Not read by Java (the nacos-k8s peer finder uses it for peer
		// addresses), but earlier nacosd releases took the port from it.
		if v, ok := s.getenv("NACOS_SERVER_PORT"); ok && v != "" {
			s.set(layerImage, "server.port", v, "env NACOS_SERVER_PORT")
		}
	}
	if host, ok := s.getenv("MYSQL_SERVICE_HOST"); ok && host != "" {
		port := envOr(s, "MYSQL_SERVICE_PORT", "3306")
		db, _ := s.getenv("MYSQL_SERVICE_DB_NAME")
		param := envOr(s, "MYSQL_SERVICE_DB_PARAM", "characterEncoding=utf8&connectTimeout=1000&socketTimeout=3000&autoReconnect=true&useSSL=false")
		s.set(layerImage, "db.url.0", "jdbc:mysql://"+host+":"+port+"/"+db+"?"+param, "env MYSQL_SERVICE_*")
	}
	// JAVA_OPT_EXT is appended to the java command line: its -D options
	// rank above the script's.
	if ext, ok := s.getenv("JAVA_OPT_EXT"); ok {
		for _, tok := range strings.Fields(ext) {
			if k, v, ok := parseDefine(tok); ok {
				s.set(layerScript, k, v, "JAVA_OPT_EXT -D"+k)
			} else if tok != "" {
				jvm = append(jvm, "JAVA_OPT_EXT "+tok)
			}
		}
	}
	for _, n := range jvmVars {
		if v, ok := s.getenv(n); ok && v != "" {
			jvm = append(jvm, n)
		}
	}
	sort.Strings(jvm)
	return jvm, nil
}

func envOr(s *sources, name, def string) string {
	if v, ok := s.getenv(name); ok && v != "" {
		return v
	}
	return def
}

// parseDefine parses a -Dkey=value argument (-Dkey alone is "").
func parseDefine(arg string) (key, val string, ok bool) {
	if !strings.HasPrefix(arg, "-D") || len(arg) < 3 {
		return "", "", false
	}
	kv := arg[2:]
	if i := strings.IndexByte(kv, '='); i >= 0 {
		return kv[:i], kv[i+1:], true
	}
	return kv, "", true
}
