package settings

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// honoured are the nacos.*, server.* and spring.* properties nacosd reads
// (fill.go; TestHonouredCoversReads keeps the list complete). Some are
// read only under conditions (nacos.inetutils.* without nacos.server.ip),
// so the list, not what one start happened to read, decides.
var honoured = []string{
	"nacos.home", "nacos.standalone", "nacos.functionMode",
	"server.port", "server.address", "server.servlet.contextPath",
	"nacos.server.ip", "nacos.inetutils.ip-address", "nacos.preferHostnameOverIp",
	"nacos.inetutils.prefer-hostname-over-ip", "nacos.inetutils.use-only-site-local-interfaces",
	"nacos.inetutils.preferred-networks", "nacos.inetutils.ignored-interfaces",
	"nacos.member.list", "nacos.core.member.lookup.type",
	"nacos.core.auth.enabled", "nacos.core.auth.system.type", "nacos.core.auth.default.token.secret.key",
	"nacos.core.auth.default.token.expire.seconds", "nacos.core.auth.caching.enabled",
	"nacos.core.auth.enable.userAgentAuthWhite", "nacos.core.auth.server.identity.key",
	"nacos.core.auth.server.identity.value",
	"nacos.naming.expireInstance", "nacos.naming.empty-service.auto-clean",
	"nacos.naming.empty-service.clean.initial-delay-ms", "nacos.naming.empty-service.clean.period-time-ms",
	"nacos.config.retention.days", "nacos.core.snowflake.worker-id",
	"server.tomcat.accesslog.enabled", "server.tomcat.accesslog.pattern", "server.tomcat.accesslog.directory",
	"server.tomcat.accesslog.prefix", "server.tomcat.accesslog.suffix",
	"spring.config.location", "spring.config.additional-location", "spring.datasource.platform",
	// Java 2.x's names, for a 2.x application.properties
	"nacos.core.auth.plugin.nacos.token.secret.key", "nacos.core.auth.plugin.nacos.token.expire.seconds",
	"nacos.server.grpc.port.offset", "nacos.remote.server.grpc.sdk.maxinboundmessagesize",
}

// ignoredOnPurpose are Java properties nacosd does without, knowingly: the
// Java distribution's and the image's conf set them, and nothing a user
// can see depends on them here. With a value, only that value is ignored
// (nacos.istio.mcp.server.enabled=false is the default; =true asks for an
// MCP server nacosd does not have, and is warned about).
var ignoredOnPurpose = []struct{ key, value, why string }{
	{"server.error.include-message", "", "error answers always carry the message, as Java's ALWAYS"},
	{"server.tomcat.basedir", "", "the access log lives under the home (server.tomcat.accesslog.directory)"},
	{"nacos.security.ignore.urls", "", "deprecated since Java Nacos 1.2.0"},
	{"spring.security.enabled", "", "deprecated since Java Nacos 1.2.0"},
	{"nacos.naming.distro.taskDispatchPeriod", "", "Distro tuning; nacosd's Distro has its own timings"},
	{"nacos.naming.distro.taskDispatchThreadCount", "", "Distro tuning"},
	{"nacos.naming.distro.batchSyncKeyCount", "", "Distro tuning"},
	{"nacos.naming.distro.syncRetryDelay", "", "Distro tuning"},
	{"nacos.naming.distro.initDataRatio", "", "Distro tuning"},
	{"nacos.naming.data.warmup", "", "nacosd is ready once its data is loaded"},
	{"nacos.cmdb.dumpTaskInterval", "", "CMDB tuning; nacosd has no CMDB"},
	{"nacos.cmdb.eventTaskInterval", "", "CMDB tuning"},
	{"nacos.cmdb.labelTaskInterval", "", "CMDB tuning"},
	{"nacos.cmdb.loadDataAtStart", "false", "the default"},
	{"nacos.istio.mcp.server.enabled", "false", "the default"},
}

// javaIndex drops a list index ("nacos.member.list[0]" is nacos.member.list).
var javaIndex = regexp.MustCompile(`\[\d+\]$`)

// warnUnknown adds one warning for each nacos.*, server.* or spring.*
// property of a configuration file that nacosd neither reads nor ignores
// on purpose (a typo, or a Java feature nacosd does not have), naming the
// property and where it is. Java-only properties have their own warning.
func (st *Settings) warnUnknown(src *sources) {
	known := map[string]bool{}
	for _, k := range honoured {
		known[canonical(k)] = true
	}
	ignored := map[string]string{}
	for _, ig := range ignoredOnPurpose {
		ignored[canonical(ig.key)] = ig.value
	}
	var keys []string
	for k := range src.layers[layerFile] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := src.layers[layerFile][k]
		if !strings.HasPrefix(k, "nacos.") && !strings.HasPrefix(k, "server.") && !strings.HasPrefix(k, "spring.") {
			continue
		}
		base := javaIndex.ReplaceAllString(k, "")
		if known[base] || src.read[k] || javaOnly(k, v.raw) {
			continue
		}
		if want, ok := ignored[base]; ok && (want == "" || strings.EqualFold(strings.TrimSpace(v.raw), want)) {
			continue
		}
		name := v.name
		if _, ok := ignored[base]; ok {
			name += "=" + strings.TrimSpace(v.raw) // the value is what is not supported
		}
		st.Warnings = append(st.Warnings, fmt.Sprintf("property %s (%s) is not used by nacosd and has no effect: "+
			"a misspelt name, or a Java Nacos feature nacosd does not have (docs/deployment.md lists the properties nacosd reads)",
			name, v.from))
	}
}
