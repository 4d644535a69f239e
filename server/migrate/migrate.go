// Package migrate copies a Java Nacos 1.x into a running nacosd: the
// domain side of `nacosd migrate`. It reads the Java server over its HTTP
// API (its embedded Derby through /v1/cs/ops/derby when it has one) and/or
// its MySQL database (read-only), and writes through nacosd's HTTP API:
// the Nacos endpoints for namespaces, permissions and naming, and nacosd's
// /v1/nacosd/migrate/* for what the Nacos API cannot write (config times,
// ids and history, bcrypt hashes, ROLE_ADMIN bindings). Every write is
// compare-then-write, so a second run changes nothing; nothing is ever
// deleted on either side. See docs/migration.md.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"github.com/nacosd/nacosd/server/config"
)

// Options configure a run.
type Options struct {
	// From is a Java Nacos's base URL with its context path
	// (http://10.0.0.5:8848/nacos); FromUser/FromPassword log in to it
	// (needed when its auth is on; /v1/cs/ops/derby and the user list
	// need an admin then).
	From, FromUser, FromPassword string
	// FromMySQL is Java Nacos's MySQL database: a go-sql-driver DSN
	// (user:pass@tcp(host:3306)/nacos) or Java's db.url
	// (jdbc:mysql://host:3306/nacos?...) with MySQLUser/MySQLPassword.
	FromMySQL, MySQLUser, MySQLPassword string
	// MySQLLocation is the time zone the Java server wrote DATETIME
	// columns in (its JVM zone; time.Local when nil).
	MySQLLocation *time.Location
	// To is nacosd's base URL; ToUser/ToPassword are a nacosd admin
	// (ROLE_ADMIN is needed even with nacosd's auth off).
	To, ToUser, ToPassword string
	// DryRun reads everything and reports what would change; nothing is
	// written.
	DryRun bool
	// Progress receives the progress bars (nil: none); Terminal redraws
	// them in place.
	Progress io.Writer
	Terminal bool
	// Timeout bounds each HTTP request (30 s).
	Timeout time.Duration
	// BatchBytes bounds the config content sent per request (4 MiB).
	BatchBytes int
	Logger     *slog.Logger
}

// Validate checks the options.
func (o Options) Validate() error {
	switch {
	case o.From == "" && o.FromMySQL == "":
		return errors.New("migrate: nothing to read: give -from (a Java Nacos URL) and/or -from-mysql")
	case o.To == "":
		return errors.New("migrate: -to (the nacosd URL) is required")
	case o.ToUser == "":
		return errors.New("migrate: -to-user is required (a nacosd user with ROLE_ADMIN)")
	}
	return nil
}

// Run copies everything it can read into nacosd and returns the summary.
// A failure that stops the run is returned with the summary so far; data
// refused record by record is listed in Summary.Skips.
func Run(ctx context.Context, o Options) (*Summary, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = 4 << 20
	}
	if o.MySQLLocation == nil {
		o.MySQLLocation = time.Local
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &run{o: o, sum: newSummary(), prog: newProgress(o.Progress, o.Terminal)}
	r.sum.DryRun = o.DryRun
	defer r.close()
	if err := r.connect(ctx); err != nil {
		return r.sum, err
	}
	for _, phase := range []func(context.Context) error{r.namespaces, r.configs, r.users, r.roles, r.permissions, r.naming, r.ownUser} {
		if err := phase(ctx); err != nil {
			return r.sum, err
		}
	}
	return r.sum, nil
}

type run struct {
	o    Options
	sum  *Summary
	prog *progress

	java   *client // nil without -from
	to     *client
	own    *user  // the source's record of the user this run logs in as (ownUser)
	tables tables // nil: configs and users over the REST API
	viaSQL bool   // tables is MySQL
}

func (r *run) close() {
	if r.tables != nil {
		_ = r.tables.close()
	}
}

func (r *run) connect(ctx context.Context) error {
	var err error
	if r.to, err = newClient(r.o.To, r.o.ToUser, r.o.ToPassword, r.o.Timeout); err != nil {
		return err
	}
	r.sum.To = r.to.base
	if err := r.to.login(ctx); err != nil {
		return err
	}
	if r.o.FromMySQL != "" {
		t, err := openMySQL(ctx, r.o.FromMySQL, r.o.MySQLUser, r.o.MySQLPassword)
		if err != nil {
			return err
		}
		r.tables, r.viaSQL = t, true
		r.sum.From = append(r.sum.From, t.describe())
	}
	if r.o.From != "" {
		if r.java, err = newClient(r.o.From, r.o.FromUser, r.o.FromPassword, r.o.Timeout); err != nil {
			return err
		}
		if err := r.java.login(ctx); err != nil {
			return err
		}
		r.sum.From = append(r.sum.From, "Java Nacos "+r.java.base)
		if r.tables == nil {
			derby, err := probeDerby(ctx, r.java)
			if err != nil {
				return err
			}
			if derby {
				r.tables = &derbyTables{c: r.java}
				r.sum.From[len(r.sum.From)-1] += " (embedded Derby via /v1/cs/ops/derby)"
			}
		}
	}
	if r.java == nil {
		r.sum.note("naming (services, clusters, persistent instances) is not in the MySQL database of Java Nacos 1.4: give -from <Java Nacos URL> as well to copy it")
	}
	return nil
}

// namespace is one tenant_info row.
type namespace struct {
	ID, Name string
	Desc     *string
}

// readNamespaces lists the source's namespaces (public excluded).
func (r *run) readNamespaces(ctx context.Context) ([]namespace, error) {
	var out []namespace
	if r.tables != nil {
		err := r.tables.scan(ctx, "tenant_info", []string{"tenant_id", "tenant_name", "tenant_desc", "kp"}, "id", func(rw row) error {
			if rw.str("kp") == "1" && rw.str("tenant_id") != "" {
				out = append(out, namespace{ID: rw.str("tenant_id"), Name: rw.str("tenant_name"), Desc: rw.strp("tenant_desc")})
			}
			return nil
		})
		return out, err
	}
	return listNamespaces(ctx, r.java)
}

type nsItem struct {
	Namespace         string  `json:"namespace"`
	NamespaceShowName string  `json:"namespaceShowName"`
	NamespaceDesc     *string `json:"namespaceDesc"`
	Type              int     `json:"type"`
}

// listNamespaces reads GET /v1/console/namespaces and each one's
// description (show=all).
func listNamespaces(ctx context.Context, c *client) ([]namespace, error) {
	var res struct {
		Data []nsItem `json:"data"`
	}
	if err := c.get(ctx, "/v1/console/namespaces", nil, &res); err != nil {
		return nil, fmt.Errorf("migrate: list namespaces of %s: %w", c.base, err)
	}
	var out []namespace
	for _, it := range res.Data {
		if it.Namespace == "" {
			continue
		}
		var d nsItem
		if err := c.get(ctx, "/v1/console/namespaces", url.Values{"show": {"all"}, "namespaceId": {it.Namespace}}, &d); err != nil {
			return nil, fmt.Errorf("migrate: read namespace %q of %s: %w", it.Namespace, c.base, err)
		}
		out = append(out, namespace{ID: it.Namespace, Name: it.NamespaceShowName, Desc: d.NamespaceDesc})
	}
	return out, nil
}

func (r *run) namespaces(ctx context.Context) error {
	src, err := r.readNamespaces(ctx)
	if err != nil {
		return err
	}
	have, err := listNamespaces(ctx, r.to)
	if err != nil {
		return err
	}
	cur := map[string]namespace{}
	for _, n := range have {
		cur[n.ID] = n
	}
	r.prog.start(KindNamespaces, len(src))
	defer r.prog.finish()
	for _, n := range src {
		r.prog.step(1)
		old, ok := cur[n.ID]
		if ok && old.Name == n.Name && strp(old.Desc) == strp(n.Desc) && (old.Desc == nil) == (n.Desc == nil) {
			r.sum.add(KindNamespaces, outcomeUnchanged)
			continue
		}
		var q url.Values
		method, outcome := "POST", outcomeCreated
		if ok {
			method, outcome = "PUT", outcomeUpdated
			q = url.Values{"namespace": {n.ID}, "namespaceShowName": {n.Name}}
		} else {
			q = url.Values{"customNamespaceId": {n.ID}, "namespaceName": {n.Name}}
		}
		if n.Desc != nil { // absent stays null, as Java stores it
			q.Set("namespaceDesc", *n.Desc)
		}
		if !r.o.DryRun {
			var body string
			if err := r.to.send(ctx, method, "/v1/console/namespaces", q, &body); err != nil {
				r.sum.skip(KindNamespaces, n.ID, err.Error())
				continue
			}
			if body != "true" {
				r.sum.skip(KindNamespaces, n.ID, "nacosd answered "+strconv.Quote(truncate(body, 100)))
				continue
			}
		}
		r.sum.add(KindNamespaces, outcome)
	}
	return nil
}

func strp(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// configs copies every config with its variants and history.
func (r *run) configs(ctx context.Context) error {
	b := &batcher{r: r, max: r.o.BatchBytes}
	emit := func(set config.ImportSet) error { return b.add(ctx, set) }
	if r.tables != nil {
		total, err := countTableConfigs(ctx, r.tables)
		if err != nil {
			return err
		}
		r.prog.start("configs and history", total)
		if err := tableConfigs(ctx, r.tables, r.o.MySQLLocation, emit); err != nil {
			r.prog.finish()
			return err
		}
		for _, t := range []string{"config_info_aggr", "group_capacity", "tenant_capacity"} {
			if n, err := r.tables.count(ctx, t); err == nil && n > 0 {
				r.sum.note("%s: %d rows not copied (nacosd has no aggregate configs or capacity quotas)", t, n)
			}
		}
	} else {
		ns, err := listNamespaces(ctx, r.java)
		if err != nil {
			return err
		}
		ids := []string{""}
		for _, n := range ns {
			ids = append(ids, n.ID)
		}
		r.prog.start("configs and history", 0)
		if err := restConfigs(ctx, r.java, ids, emit); err != nil {
			r.prog.finish()
			return err
		}
		r.sum.note("tag variants (config_info_tag) and the history of deleted configs are not readable over the HTTP API of a Java Nacos on an external database: give -from-mysql to copy them")
	}
	err := b.flush(ctx)
	r.prog.finish()
	return err
}

// users, roles and permissions come from the tables when there are some
// (MySQL, or Derby), else from the Java API.
type user struct{ Username, Password string }
type role struct{ Role, Username string }
type permission struct{ Role, Resource, Action string }

type page[T any] struct {
	TotalCount int `json:"totalCount"`
	PageItems  []T `json:"pageItems"`
}

func listAll[T any](ctx context.Context, c *client, path string) ([]T, error) {
	var out []T
	for p := 1; ; p++ {
		var pg page[T]
		if err := c.get(ctx, path, url.Values{"pageNo": {strconv.Itoa(p)}, "pageSize": {"500"}}, &pg); err != nil {
			if isStatus(err, 403) {
				return nil, fmt.Errorf("migrate: list %s of %s needs an admin (give its user and password): %w", path, c.base, err)
			}
			return nil, fmt.Errorf("migrate: list %s of %s: %w", path, c.base, err)
		}
		out = append(out, pg.PageItems...)
		if len(pg.PageItems) == 0 || len(out) >= pg.TotalCount {
			return out, nil
		}
	}
}

func (r *run) users(ctx context.Context) error {
	var src []user
	if r.tables != nil {
		if err := r.tables.scan(ctx, "users", []string{"username", "password"}, "username", func(rw row) error {
			src = append(src, user{rw.str("username"), rw.str("password")})
			return nil
		}); err != nil {
			return err
		}
	} else {
		var err error
		if src, err = listAll[user](ctx, r.java, "/v1/auth/users"); err != nil {
			return err
		}
	}
	r.prog.start(KindUsers, len(src))
	defer r.prog.finish()
	for _, u := range src {
		r.prog.step(1)
		if u.Password == "" {
			r.sum.skip(KindUsers, u.Username, "the source does not show its password hash (nacosd never does): create the user on nacosd by hand")
			continue
		}
		if u.Username == r.to.user && r.to.user != "" {
			own := u
			r.own = &own // last (ownUser)
			continue
		}
		r.importUser(ctx, u)
	}
	return nil
}

// importUser imports one user (its bcrypt hash) into nacosd.
func (r *run) importUser(ctx context.Context, u user) {
	var res struct {
		Outcome string `json:"outcome"`
	}
	q := url.Values{}
	if r.o.DryRun {
		q.Set("dryRun", "true")
	}
	if err := r.to.postJSON(ctx, "/v1/nacosd/migrate/user", q, map[string]string{"username": u.Username, "password": u.Password}, &res); err != nil {
		r.sum.skip(KindUsers, u.Username, err.Error())
		return
	}
	r.sum.add(KindUsers, res.Outcome)
}

// ownUser imports, last, the user this run logs in to nacosd as: taking
// the source's password ends that user's tokens on nacosd (a password
// change does, docs/security.md), this run's own included.
func (r *run) ownUser(ctx context.Context) error {
	if r.own != nil {
		r.importUser(ctx, *r.own)
	}
	return nil
}

func (r *run) roles(ctx context.Context) error {
	var src []role
	if r.tables != nil {
		if err := r.tables.scan(ctx, "roles", []string{"role", "username"}, "role, username", func(rw row) error {
			src = append(src, role{rw.str("role"), rw.str("username")})
			return nil
		}); err != nil {
			return err
		}
	} else {
		var err error
		if src, err = listAll[role](ctx, r.java, "/v1/auth/roles"); err != nil {
			return err
		}
	}
	r.prog.start(KindRoles, len(src))
	defer r.prog.finish()
	for _, x := range src {
		r.prog.step(1)
		var res struct {
			Outcome string `json:"outcome"`
		}
		q := url.Values{}
		if r.o.DryRun {
			q.Set("dryRun", "true")
		}
		if err := r.to.postJSON(ctx, "/v1/nacosd/migrate/role", q, map[string]string{"role": x.Role, "username": x.Username}, &res); err != nil {
			if r.o.DryRun && isStatus(err, 400) { // the user would have been created first
				r.sum.add(KindRoles, outcomeCreated)
				continue
			}
			r.sum.skip(KindRoles, x.Role+"/"+x.Username, err.Error())
			continue
		}
		r.sum.add(KindRoles, res.Outcome)
	}
	return nil
}

func (r *run) permissions(ctx context.Context) error {
	var src []permission
	if r.tables != nil {
		if err := r.tables.scan(ctx, "permissions", []string{"role", "resource", "action"}, "role, resource, action", func(rw row) error {
			src = append(src, permission{rw.str("role"), rw.str("resource"), rw.str("action")})
			return nil
		}); err != nil {
			return err
		}
	} else {
		var err error
		if src, err = listAll[permission](ctx, r.java, "/v1/auth/permissions"); err != nil {
			return err
		}
	}
	have, err := listAll[permission](ctx, r.to, "/v1/auth/permissions")
	if err != nil {
		return err
	}
	cur := map[permission]bool{}
	for _, p := range have {
		cur[p] = true
	}
	r.prog.start(KindPermissions, len(src))
	defer r.prog.finish()
	for _, p := range src {
		r.prog.step(1)
		if cur[p] {
			r.sum.add(KindPermissions, outcomeUnchanged)
			continue
		}
		if !r.o.DryRun {
			var res struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			q := url.Values{"role": {p.Role}, "resource": {p.Resource}, "action": {p.Action}}
			if err := r.to.send(ctx, "POST", "/v1/auth/permissions", q, &res); err != nil {
				r.sum.skip(KindPermissions, p.Role+" "+p.Resource+" "+p.Action, err.Error())
				continue
			}
			if res.Code != 200 {
				r.sum.skip(KindPermissions, p.Role+" "+p.Resource+" "+p.Action, res.Message)
				continue
			}
		}
		r.sum.add(KindPermissions, outcomeCreated)
	}
	return nil
}

// naming copies services, their clusters and persistent instances;
// ephemeral instances are counted and left to their clients.
func (r *run) naming(ctx context.Context) error {
	if r.java == nil {
		return nil
	}
	var names struct {
		Services map[string][]string `json:"services"`
	}
	if err := r.java.get(ctx, "/v1/ns/service/names", nil, &names); err != nil {
		return fmt.Errorf("migrate: list naming namespaces of %s: %w", r.java.base, err)
	}
	total := 0
	for _, s := range names.Services {
		total += len(s)
	}
	r.prog.start(KindServices, total)
	defer r.prog.finish()
	ephemeral := 0
	err := listServices(ctx, r.java, sortedKeys(names.Services), func(s service) error {
		r.prog.step(1)
		ephemeral += s.ephemeral
		return copyService(ctx, r.to, s, r.o.DryRun, r.sum)
	})
	if ephemeral > 0 {
		r.sum.note("%d ephemeral instances not copied: their clients register them with nacosd themselves once pointed at it (docs/migration.md, cutting clients over)", ephemeral)
	}
	return err
}
