package migrate

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/config"
)

// Columns read of each table (conf/nacos-mysql.sql of 1.4.8; the Derby
// schema has the same names).
var (
	colsInfo     = []string{"id", "data_id", "group_id", "tenant_id", "app_name", "content", "gmt_create", "gmt_modified", "src_user", "src_ip", "c_desc", "c_use", "effect", "type", "c_schema"}
	colsBeta     = []string{"id", "data_id", "group_id", "tenant_id", "app_name", "content", "beta_ips", "gmt_create", "gmt_modified", "src_ip"}
	colsTag      = []string{"id", "data_id", "group_id", "tenant_id", "tag_id", "app_name", "content", "gmt_create", "gmt_modified", "src_ip"}
	colsRelation = []string{"id", "tag_name", "data_id", "group_id", "tenant_id"}
	colsHistory  = []string{"nid", "id", "data_id", "group_id", "tenant_id", "app_name", "content", "gmt_modified", "src_user", "src_ip", "op_type"}
)

type gkey struct{ dataID, group, tenant string }

func keyOf(r row) gkey {
	return gkey{r.str("data_id"), r.str("group_id"), r.str("tenant_id")}
}

func (k gkey) String() string { return compat.GroupKey(k.dataID, k.group, k.tenant) }

// tableConfigs emits every config of the tables: one set per group key
// with its main, beta and tag rows, then the history rows in nid order
// (the batcher groups them).
func tableConfigs(ctx context.Context, t tables, loc *time.Location, emit func(config.ImportSet) error) error {
	tags := map[gkey][]string{}
	// in row order: Java reads a config's tags without ORDER BY and both
	// MySQL and Derby answer in insertion order (seen on the reference)
	if err := t.scan(ctx, "config_tags_relation", colsRelation, "nid", func(r row) error {
		tags[keyOf(r)] = append(tags[keyOf(r)], r.str("tag_name"))
		return nil
	}); err != nil {
		return err
	}
	betas := map[gkey]*config.Beta{}
	if err := t.scan(ctx, "config_info_beta", colsBeta, "id", func(r row) error {
		k := keyOf(r)
		betas[k] = &config.Beta{ID: r.i64("id"), DataID: k.dataID, Group: k.group, Tenant: k.tenant, AppName: r.str("app_name"),
			Content: r.str("content"), BetaIps: r.str("beta_ips"), Created: r.ms("gmt_create", loc), Modified: r.ms("gmt_modified", loc),
			SrcIP: r.str("src_ip")}
		return nil
	}); err != nil {
		return err
	}
	tagRows := map[gkey][]config.Tag{}
	if err := t.scan(ctx, "config_info_tag", colsTag, "id", func(r row) error {
		k := keyOf(r)
		tagRows[k] = append(tagRows[k], config.Tag{ID: r.i64("id"), DataID: k.dataID, Group: k.group, Tenant: k.tenant,
			Tag: r.str("tag_id"), AppName: r.str("app_name"), Content: r.str("content"), Created: r.ms("gmt_create", loc),
			Modified: r.ms("gmt_modified", loc), SrcIP: r.str("src_ip")})
		return nil
	}); err != nil {
		return err
	}
	if err := t.scan(ctx, "config_info", colsInfo, "id", func(r row) error {
		k := keyOf(r)
		in := &config.Info{ID: r.i64("id"), DataID: k.dataID, Group: k.group, Tenant: k.tenant, AppName: r.str("app_name"),
			Content: r.str("content"), Created: r.ms("gmt_create", loc), Modified: r.ms("gmt_modified", loc),
			SrcUser: r.strp("src_user"), SrcIP: r.str("src_ip"), Desc: r.strp("c_desc"), Use: r.strp("c_use"),
			Effect: r.strp("effect"), Type: r.str("type"), Schema: r.strp("c_schema"), Tags: tags[k]}
		set := config.ImportSet{Info: in, Beta: betas[k], Tags: tagRows[k]}
		delete(betas, k)
		delete(tagRows, k)
		return emit(set)
	}); err != nil {
		return err
	}
	// beta and tag rows whose main config is gone: Java keeps serving them
	var rest []gkey
	for k := range betas {
		rest = append(rest, k)
	}
	for k := range tagRows {
		if betas[k] == nil {
			rest = append(rest, k)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].String() < rest[j].String() })
	for _, k := range rest {
		if err := emit(config.ImportSet{Beta: betas[k], Tags: tagRows[k]}); err != nil {
			return err
		}
	}
	return t.scan(ctx, "his_config_info", colsHistory, "nid", func(r row) error {
		k := keyOf(r)
		h := config.History{Nid: r.i64("nid"), ID: r.i64("id"), DataID: k.dataID, Group: k.group, Tenant: k.tenant,
			AppName: r.str("app_name"), Content: r.str("content"), SrcUser: r.strp("src_user"), SrcIP: r.str("src_ip"),
			Op: strings.TrimSpace(r.str("op_type")), Modified: r.ms("gmt_modified", loc)}
		return emit(config.ImportSet{History: []config.History{h}})
	})
}

// countTableConfigs is the progress total: group keys with a main, beta
// or tag row, plus history rows.
func countTableConfigs(ctx context.Context, t tables) (int, error) {
	n := 0
	for _, tb := range []string{"config_info", "config_info_beta", "config_info_tag", "his_config_info"} {
		c, err := t.count(ctx, tb)
		if err != nil {
			return 0, err
		}
		n += c
	}
	return n, nil
}

// The JSON shapes of the Java config API the REST path reads.
type (
	configPage struct {
		TotalCount     int `json:"totalCount"`
		PagesAvailable int `json:"pagesAvailable"`
		PageItems      []struct {
			DataID string `json:"dataId"`
			Group  string `json:"group"`
			Tenant string `json:"tenant"`
		} `json:"pageItems"`
	}
	configAll struct {
		ID         jsonInt `json:"id"`
		DataID     string  `json:"dataId"`
		Group      string  `json:"group"`
		Content    string  `json:"content"`
		Tenant     string  `json:"tenant"`
		AppName    string  `json:"appName"`
		Type       *string `json:"type"`
		CreateTime int64   `json:"createTime"`
		ModifyTime int64   `json:"modifyTime"`
		CreateUser *string `json:"createUser"`
		CreateIP   string  `json:"createIp"`
		Desc       *string `json:"desc"`
		Use        *string `json:"use"`
		Effect     *string `json:"effect"`
		Schema     *string `json:"schema"`
		ConfigTags *string `json:"configTags"`
	}
	betaResult struct {
		Code int `json:"code"`
		Data *struct {
			ID      jsonInt `json:"id"`
			Content string  `json:"content"`
			AppName string  `json:"appName"`
			BetaIps string  `json:"betaIps"`
		} `json:"data"`
	}
	historyPage struct {
		PagesAvailable int           `json:"pagesAvailable"`
		PageItems      []historyItem `json:"pageItems"`
	}
	historyItem struct {
		ID               jsonInt `json:"id"` // the nid
		AppName          string  `json:"appName"`
		Content          string  `json:"content"`
		SrcIP            string  `json:"srcIp"`
		SrcUser          *string `json:"srcUser"`
		OpType           string  `json:"opType"`
		LastModifiedTime string  `json:"lastModifiedTime"`
	}
)

// jsonInt reads a number or a numeric string (Jackson writes long ids as
// strings in 1.4.8).
type jsonInt int64

func (j *jsonInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "null" || s == "" {
		*j = 0
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer: %s", b)
	}
	*j = jsonInt(n)
	return nil
}

// restConfigs emits the configs of a Java Nacos on an external database
// through its HTTP API: each config with its beta and its history (by
// config, so nids are renumbered on nacosd). The API lists neither tag
// variants nor the history of deleted configs.
func restConfigs(ctx context.Context, c *client, namespaces []string, emit func(config.ImportSet) error) error {
	for _, ns := range namespaces {
		var keys []gkey
		for page := 1; ; page++ {
			var p configPage
			q := url.Values{"search": {"blur"}, "dataId": {""}, "group": {""}, "tenant": {ns}, "pageNo": {strconv.Itoa(page)}, "pageSize": {"200"}}
			if err := c.get(ctx, "/v1/cs/configs", q, &p); err != nil {
				return fmt.Errorf("migrate: list configs of namespace %q: %w", ns, err)
			}
			for _, it := range p.PageItems {
				keys = append(keys, gkey{it.DataID, it.Group, ns})
			}
			if page >= p.PagesAvailable {
				break
			}
		}
		for _, k := range keys {
			set, err := restConfig(ctx, c, k)
			if err != nil {
				return err
			}
			if err := emit(set); err != nil {
				return err
			}
		}
	}
	return nil
}

func restConfig(ctx context.Context, c *client, k gkey) (config.ImportSet, error) {
	q := url.Values{"dataId": {k.dataID}, "group": {k.group}, "tenant": {k.tenant}}
	var all configAll
	qa := cloneValues(q)
	qa.Set("show", "all")
	if err := c.get(ctx, "/v1/cs/configs", qa, &all); err != nil {
		return config.ImportSet{}, fmt.Errorf("migrate: read config %s: %w", k, err)
	}
	in := &config.Info{ID: int64(all.ID), DataID: k.dataID, Group: k.group, Tenant: k.tenant, AppName: all.AppName,
		Content: all.Content, Created: all.CreateTime, Modified: all.ModifyTime, SrcUser: all.CreateUser, SrcIP: all.CreateIP,
		Desc: all.Desc, Use: all.Use, Effect: all.Effect, Schema: all.Schema}
	if all.Type != nil {
		in.Type = *all.Type
	}
	if all.ConfigTags != nil && *all.ConfigTags != "" {
		in.Tags = strings.Split(*all.ConfigTags, ",")
	}
	set := config.ImportSet{Info: in}
	var beta betaResult
	qb := cloneValues(q)
	qb.Set("beta", "true")
	if err := c.get(ctx, "/v1/cs/configs", qb, &beta); err != nil {
		return set, fmt.Errorf("migrate: read beta of %s: %w", k, err)
	}
	if d := beta.Data; d != nil && d.BetaIps != "" {
		set.Beta = &config.Beta{ID: int64(d.ID), DataID: k.dataID, Group: k.group, Tenant: k.tenant, AppName: d.AppName,
			Content: d.Content, BetaIps: d.BetaIps}
	}
	var items []historyItem
	for page := 1; ; page++ {
		var hp historyPage
		qh := cloneValues(q)
		qh.Set("search", "accurate")
		qh.Set("pageNo", strconv.Itoa(page))
		qh.Set("pageSize", "100")
		if err := c.get(ctx, "/v1/cs/history", qh, &hp); err != nil {
			return set, fmt.Errorf("migrate: list history of %s: %w", k, err)
		}
		items = append(items, hp.PageItems...)
		if page >= hp.PagesAvailable {
			break
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ID < items[j].ID })
	for _, it := range items {
		var d historyItem
		qd := cloneValues(q)
		qd.Set("nid", strconv.FormatInt(int64(it.ID), 10))
		if err := c.get(ctx, "/v1/cs/history", qd, &d); err != nil {
			return set, fmt.Errorf("migrate: read history %d of %s: %w", it.ID, k, err)
		}
		var mod int64
		if t, err := time.Parse("2006-01-02T15:04:05.000-07:00", d.LastModifiedTime); err == nil {
			mod = t.UnixMilli()
		}
		set.History = append(set.History, config.History{Nid: int64(it.ID), ID: in.ID, DataID: k.dataID, Group: k.group,
			Tenant: k.tenant, AppName: d.AppName, Content: d.Content, SrcUser: d.SrcUser, SrcIP: d.SrcIP,
			Op: strings.TrimSpace(d.OpType), Modified: mod})
	}
	return set, nil
}
