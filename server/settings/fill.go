package settings

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// defaultSecretKey is nacos.core.auth.default.token.secret.key as the
// console jar's classpath application.properties sets it: what Java 1.4.8
// uses when no other source names a key (console-auth-core-v1.md §3.1).
const defaultSecretKey = "SecretKey012345678901234567890123456789012345678901234567890123456789"

// reader reads typed properties, turning a malformed value into an error
// that names the property and where the value came from.
type reader struct {
	src *sources
}

func (r *reader) str(name, def string) (string, string, error) {
	v, ok, err := r.src.lookup(name)
	if err != nil {
		return "", "", err
	}
	if !ok {
		return def, "default", nil
	}
	return v.raw, v.from, nil
}

func (r *reader) boolean(name string, def bool) (bool, string, error) {
	v, ok, err := r.src.lookup(name)
	if err != nil {
		return false, "", err
	}
	if !ok {
		return def, "default", nil
	}
	b, valid := parseBool(v.raw)
	if !valid {
		return false, "", fmt.Errorf("property %s (from %s): %q is not a boolean (true or false)", name, v.from, v.raw)
	}
	return b, v.from, nil
}

func (r *reader) integer(name string, def, min, max int64) (int64, string, error) {
	v, ok, err := r.src.lookup(name)
	if err != nil {
		return 0, "", err
	}
	if !ok {
		return def, "default", nil
	}
	n, valid := parseInt(v.raw)
	if !valid {
		return 0, "", fmt.Errorf("property %s (from %s): %q is not a whole number", name, v.from, v.raw)
	}
	if n < min || n > max {
		return 0, "", fmt.Errorf("property %s (from %s): %d is out of range %d..%d", name, v.from, n, min, max)
	}
	return n, v.from, nil
}

// list reads a comma-separated property or its indexed form name[0], name[1], ….
func (r *reader) list(name string) ([]string, string, error) {
	s, from, err := r.str(name, "")
	if err != nil {
		return nil, "", err
	}
	var out []string
	if from != "default" {
		out = splitList(s, ",")
	}
	for i := 0; ; i++ {
		v, ok, err := r.src.lookup(name + "[" + strconv.Itoa(i) + "]")
		if err != nil {
			return nil, "", err
		}
		if !ok {
			break
		}
		if from == "default" {
			from = v.from
		}
		out = append(out, strings.TrimSpace(v.raw))
	}
	return out, from, nil
}

func splitList(s, seps string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// fill reads every property nacosd uses into st.
func (r *reader) fill(st *Settings, home string, o Options) error {
	c := &st.Config
	c.Home = home
	c.ClusterConf = filepath.Join(home, "conf", "cluster.conf")

	standalone, from, err := r.boolean("nacos.standalone", true)
	if err != nil {
		return err
	}
	c.Standalone = standalone
	mode := "cluster"
	if standalone {
		mode = "standalone"
	}
	if from == "default" {
		from = "default (nacosd starts standalone unless told otherwise)"
	}
	st.note("mode", "mode", mode, "from", from)

	port, from, err := r.integer("server.port", 8848, 0, 65535)
	if err != nil {
		return err
	}
	c.Port = int(port)
	host, _, err := r.str("server.address", "")
	if err != nil {
		return err
	}
	c.Host = strings.TrimSpace(host)
	st.note("HTTP port", "port", c.Port, "from", from, "listen", listenText(c.Host))

	cp, from, err := r.str("server.servlet.contextPath", "/nacos")
	if err != nil {
		return err
	}
	if c.ContextPath, err = cleanContextPath(cp); err != nil {
		return fmt.Errorf("property server.servlet.contextPath (from %s): %w", from, err)
	}
	st.note("context path", "contextPath", displayPath(c.ContextPath), "from", from)

	if err := r.fillAddress(st, o); err != nil {
		return err
	}
	if err := r.fillMembers(st); err != nil {
		return err
	}

	dataDir, from, err := r.str("nacosd.data-dir", "")
	if err != nil {
		return err
	}
	if strings.TrimSpace(dataDir) == "" {
		dataDir, from = filepath.Join(home, "data"), "<home>/data"
	} else if !filepath.IsAbs(dataDir) {
		dataDir = filepath.Join(o.WorkDir, dataDir)
	}
	c.DataDir = filepath.Clean(dataDir)
	st.note("data directory", "dataDir", c.DataDir, "from", from)

	if c.RaftAddr, _, err = r.str("nacosd.raft-addr", ""); err != nil {
		return err
	}
	if c.Push.ListenAddr, _, err = r.str("nacosd.push-addr", ":0"); err != nil {
		return err
	}
	if c.JavaPushTiming, _, err = r.boolean("nacosd.java-push-timing", false); err != nil {
		return err
	}
	if st.PprofAddr, _, err = r.str("nacosd.pprof-addr", ""); err != nil {
		return err
	}
	st.PprofAddr = strings.TrimSpace(st.PprofAddr)
	level, from, err := r.str("nacosd.log-level", "info")
	if err != nil {
		return err
	}
	if err := st.LogLevel.UnmarshalText([]byte(strings.TrimSpace(level))); err != nil {
		return fmt.Errorf("property nacosd.log-level (from %s): %q is not debug, info, warn or error", from, level)
	}

	if err := r.fillAuth(st); err != nil {
		return err
	}
	if err := r.fillDomains(st); err != nil {
		return err
	}
	if err := r.fillOps(st, home); err != nil {
		return err
	}
	return r.fillDB(st)
}

func listenText(host string) string {
	if host == "" {
		return "all interfaces"
	}
	return host
}

func displayPath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// cleanContextPath is Spring Boot's ServerProperties.Servlet: a trailing
// '/' is dropped ("/" means none), and the rest must start with '/'.
func cleanContextPath(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "/" || p == "" {
		return "", nil
	}
	p = strings.TrimSuffix(p, "/")
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("context path %q must start with '/' and not end with '/'", p)
	}
	return p, nil
}

// fillAddress picks the advertised address as InetUtils does:
// nacos.server.ip, then nacos.inetutils.ip-address, then the host name
// when preferred, then the first suitable interface address.
func (r *reader) fillAddress(st *Settings, o Options) error {
	c := &st.Config
	for _, name := range []string{"nacos.server.ip", "nacos.inetutils.ip-address"} {
		ip, from, err := r.str(name, "")
		if err != nil {
			return err
		}
		if ip = strings.TrimSpace(ip); ip != "" {
			if err := validAddress(ip); err != nil {
				return fmt.Errorf("property %s (from %s): %w", name, from, err)
			}
			c.IP = ip
			st.note("advertised address", "ip", ip, "from", from)
			return nil
		}
	}
	preferHost, from, err := r.boolean("nacos.preferHostnameOverIp", false)
	if err != nil {
		return err
	}
	if !preferHost {
		if preferHost, from, err = r.boolean("nacos.inetutils.prefer-hostname-over-ip", false); err != nil {
			return err
		}
	}
	if preferHost {
		h, err := hostname()
		if err != nil {
			return err
		}
		c.IP = h
		st.note("advertised address", "ip", h, "from", from+" (host name)")
		return nil
	}
	var opt inetOptions
	if opt.siteLocalOnly, _, err = r.boolean("nacos.inetutils.use-only-site-local-interfaces", false); err != nil {
		return err
	}
	if opt.preferred, _, err = r.list("nacos.inetutils.preferred-networks"); err != nil {
		return err
	}
	ignored, from, err := r.list("nacos.inetutils.ignored-interfaces")
	if err != nil {
		return err
	}
	for _, pat := range ignored {
		re, err := regexp.Compile("^(?:" + pat + ")$")
		if err != nil {
			return fmt.Errorf("property nacos.inetutils.ignored-interfaces (from %s): %q: %v", from, pat, err)
		}
		opt.ignored = append(opt.ignored, re)
	}
	if opt.preferIPv6, _, err = r.boolean("java.net.preferIPv6Addresses", false); err != nil {
		return err
	}
	ifs := o.Interfaces
	if ifs == nil {
		ifs = systemInterfaces()
	}
	ip, ifName := chooseIP(ifs, opt)
	if ip == "" {
		ip, ifName = "127.0.0.1", "none suitable, loopback"
	}
	c.IP = ip
	st.note("advertised address", "ip", ip, "from", "interface "+ifName)
	return nil
}

// fillMembers reads the member sources the cluster code needs.
func (r *reader) fillMembers(st *Settings) error {
	c := &st.Config
	if v, ok := r.src.getenv("NACOS_SERVERS"); ok {
		c.NacosServers = splitList(v, " \t\n,")
	}
	list, from, err := r.str("nacos.member.list", "")
	if err != nil {
		return err
	}
	c.MemberList = splitList(list, ",")
	lookup, lfrom, err := r.str("nacos.core.member.lookup.type", "")
	if err != nil {
		return err
	}
	switch lookup = strings.TrimSpace(lookup); lookup {
	case "", "file", "address-server":
		c.MemberLookup = lookup
	default:
		return fmt.Errorf("property nacos.core.member.lookup.type (from %s): %q is not file or address-server", lfrom, lookup)
	}
	if c.Standalone {
		st.note("members: standalone, this node only")
		return nil
	}
	switch {
	case len(c.NacosServers) > 0:
		st.note("members", "members", strings.Join(c.NacosServers, ","), "from", "env NACOS_SERVERS")
	case len(c.MemberList) > 0:
		st.note("members", "members", strings.Join(c.MemberList, ","), "from", from, "clusterConf", c.ClusterConf)
	default:
		st.note("members", "from", c.ClusterConf)
	}
	return nil
}

func (r *reader) fillAuth(st *Settings) error {
	a := &st.Config.Auth
	var err error
	var from string
	if a.Enabled, from, err = r.boolean("nacos.core.auth.enabled", false); err != nil {
		return err
	}
	authFrom := from
	if a.SystemType, _, err = r.str("nacos.core.auth.system.type", ""); err != nil {
		return err
	}
	a.SystemType = strings.TrimSpace(a.SystemType)
	// Java Nacos 2.x names the token settings nacos.core.auth.plugin.nacos.token.*
	// (its shipped conf has the secret empty): a non-blank 2.x setting wins,
	// so a 2.x application.properties works unchanged
	secretName, expireName := "nacos.core.auth.default.token.secret.key", "nacos.core.auth.default.token.expire.seconds"
	if v, _, err := r.str("nacos.core.auth.plugin.nacos.token.secret.key", ""); err == nil && strings.TrimSpace(v) != "" {
		secretName = "nacos.core.auth.plugin.nacos.token.secret.key"
	}
	if v, _, err := r.str("nacos.core.auth.plugin.nacos.token.expire.seconds", ""); err == nil && strings.TrimSpace(v) != "" {
		expireName = "nacos.core.auth.plugin.nacos.token.expire.seconds"
	}
	if a.SecretKey, from, err = r.str(secretName, defaultSecretKey); err != nil {
		return err
	}
	a.SecretKeyDefault = a.SecretKey == defaultSecretKey
	exp, _, err := r.integer(expireName, 18000, 1, 1<<31-1)
	if err != nil {
		return err
	}
	a.TokenExpire = time.Duration(exp) * time.Second
	if a.Caching, _, err = r.boolean("nacos.core.auth.caching.enabled", true); err != nil {
		return err
	}
	if a.UserAgentAuthWhite, _, err = r.boolean("nacos.core.auth.enable.userAgentAuthWhite", true); err != nil {
		return err
	}
	if a.ServerIdentityKey, _, err = r.str("nacos.core.auth.server.identity.key", ""); err != nil {
		return err
	}
	if a.ServerIdentityValue, _, err = r.str("nacos.core.auth.server.identity.value", ""); err != nil {
		return err
	}
	if a.AdminPassword, _, err = r.str("nacosd.auth.admin-password", ""); err != nil {
		return err
	}
	state := "off"
	if a.Enabled {
		state = "on"
	}
	keyFrom := from
	if a.SecretKeyDefault {
		keyFrom += " (the published default key)"
	}
	st.note("auth", "auth", state, "from", authFrom, "tokenKey", keyFrom, "tokenExpire", a.TokenExpire.String())
	return nil
}

// fillDomains reads the naming and config properties nacosd honours.
func (r *reader) fillDomains(st *Settings) error {
	c := &st.Config
	expire, _, err := r.boolean("nacos.naming.expireInstance", true)
	if err != nil {
		return err
	}
	c.Naming.DisableExpiry = !expire
	clean, _, err := r.boolean("nacos.naming.empty-service.auto-clean", true)
	if err != nil {
		return err
	}
	c.Naming.DisableEmptyServiceClean = !clean
	initial, _, err := r.integer("nacos.naming.empty-service.clean.initial-delay-ms", 50000, 1, 1<<40)
	if err != nil {
		return err
	}
	period, _, err := r.integer("nacos.naming.empty-service.clean.period-time-ms", 30000, 1, 1<<40)
	if err != nil {
		return err
	}
	c.Naming.EmptyServiceCleanInitial, c.Naming.EmptyServiceCleanPeriod = durationMs(initial), durationMs(period)
	trusted, from, err := r.list("nacosd.push.trusted-sources")
	if err != nil {
		return err
	}
	if c.Push.TrustedSources, err = prefixes(trusted); err != nil {
		return fmt.Errorf("property nacosd.push.trusted-sources (from %s): %w", from, err)
	}
	maxContent, _, err := r.integer("maxContent", 10485760, 1, 1<<31-1)
	if err != nil {
		return err
	}
	c.ConfigMaxContent = int(maxContent)
	days, _, err := r.integer("nacos.config.retention.days", 30, 1, 1<<31-1)
	if err != nil {
		return err
	}
	c.ConfigRetentionDays = int(days)
	worker, _, err := r.integer("nacos.core.snowflake.worker-id", -1, -1, 1023)
	if err != nil {
		return err
	}
	if worker >= 0 {
		c.SnowflakeWorkerID = &worker
	}
	// the 2.x gRPC port is the HTTP port plus this (clients read the same
	// property to find it)
	off, _, err := r.integer("nacos.server.grpc.port.offset", 1000, 1, 65535)
	if err != nil {
		return err
	}
	c.GRPC.PortOffset = int(off)
	// nacos.remote.server.grpc.sdk.max-inbound-message-size: Java's limit
	// on one request (10 MiB)
	inbound, _, err := r.integer("nacos.remote.server.grpc.sdk.max-inbound-message-size", 10<<20, 1024, 1<<31-1)
	if err != nil {
		return err
	}
	c.GRPC.MaxRecvMsgSize = int(inbound)
	tr, from, err := r.str("nacosd.grpc.transport", "lean")
	if err != nil {
		return err
	}
	switch tr = strings.TrimSpace(tr); tr {
	case "grpc-go", "lean":
		c.GRPC.Transport = tr
	default:
		return fmt.Errorf("property nacosd.grpc.transport (from %s): %q is not grpc-go or lean", from, tr)
	}
	fm, _, err := r.str("nacos.functionMode", "")
	if err != nil {
		return err
	}
	switch fm = strings.TrimSpace(fm); fm {
	case "", "all":
	case "config", "naming":
		st.FunctionMode = fm
	default:
		return fmt.Errorf("property nacos.functionMode: %q is not config or naming", fm)
	}
	return nil
}

// fillOps reads the access log and actuator exposure.
func (r *reader) fillOps(st *Settings, home string) error {
	al := &st.Config.Ops.AccessLog
	var err error
	var from string
	if al.Enabled, from, err = r.boolean("server.tomcat.accesslog.enabled", false); err != nil {
		return err
	}
	if al.Pattern, _, err = r.str("server.tomcat.accesslog.pattern", "common"); err != nil {
		return err
	}
	dir, _, err := r.str("server.tomcat.accesslog.directory", "logs")
	if err != nil {
		return err
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(home, dir)
	}
	al.Dir = dir
	if al.Prefix, _, err = r.str("server.tomcat.accesslog.prefix", "access_log"); err != nil {
		return err
	}
	if al.Suffix, _, err = r.str("server.tomcat.accesslog.suffix", ".log"); err != nil {
		return err
	}
	if al.Enabled {
		st.note("access log", "dir", al.Dir, "pattern", al.Pattern, "from", from)
	}
	auditOn, afrom, err := r.boolean("nacosd.audit-log", true)
	if err != nil {
		return err
	}
	if auditOn {
		adir, _, err := r.str("nacosd.audit-dir", "logs")
		if err != nil {
			return err
		}
		if adir = strings.TrimSpace(adir); !filepath.IsAbs(adir) {
			adir = filepath.Join(home, adir)
		}
		st.Config.Ops.AuditDir = adir
		st.note("audit log", "dir", adir, "from", afrom)
	}
	include, ifrom, err := r.list("management.endpoints.web.exposure.include")
	if err != nil {
		return err
	}
	exclude, _, err := r.list("management.endpoints.web.exposure.exclude")
	if err != nil {
		return err
	}
	ops := &st.Config.Ops
	ops.ExposePrometheus = contains(include, "prometheus") && !contains(exclude, "prometheus")
	// Spring Boot exposes health unless the include list is set without it
	// or the exclude list names it.
	ops.HideHealth = (ifrom != "default" && !contains(include, "health")) || contains(exclude, "health")
	state := "not exposed (set management.endpoints.web.exposure.include=prometheus or *)"
	if ops.ExposePrometheus {
		state = "exposed"
	}
	st.note("metrics endpoint "+st.Config.ContextPath+"/actuator/prometheus", "state", state, "from", ifrom)
	return nil
}

func contains(list []string, name string) bool {
	for _, v := range list {
		if v == "*" || strings.EqualFold(v, name) {
			return true
		}
	}
	return false
}

// fillDB reads Java's external database settings (for migrate and the
// Java-only warning); db.user and db.password serve every db.url.N
// without its own.
func (r *reader) fillDB(st *Settings) error {
	d := &st.DB
	p, _, err := r.str("spring.datasource.platform", "")
	if err != nil {
		d.Platform = "" // unresolvable placeholders in a property nacosd does not use are not fatal
	} else {
		d.Platform = platform(p)
	}
	num, _, err := r.integer("db.num", 1, 0, 64)
	if err != nil {
		num = 1
	}
	user, _, _ := r.str("db.user", "")
	pass, _, _ := r.str("db.password", "")
	for i := 0; i < int(num); i++ {
		u, _, err := r.str("db.url."+strconv.Itoa(i), "")
		if err != nil || u == "" {
			continue
		}
		iu, _, err := r.str("db.user."+strconv.Itoa(i), user)
		if err != nil {
			iu = user
		}
		ip, _, err := r.str("db.password."+strconv.Itoa(i), pass)
		if err != nil {
			ip = pass
		}
		d.URLs, d.Users, d.Passwords = append(d.URLs, u), append(d.Users, strings.TrimSpace(iu)), append(d.Passwords, strings.TrimSpace(ip))
	}
	return nil
}

// prefixes parses addresses and CIDR ranges ("10.0.0.0/8", "192.168.1.5").
func prefixes(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range list {
		if v == "" {
			continue
		}
		if strings.Contains(v, "/") {
			p, err := netip.ParsePrefix(v)
			if err != nil {
				return nil, fmt.Errorf("%q is not an address or a CIDR range", v)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or a CIDR range", v)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
