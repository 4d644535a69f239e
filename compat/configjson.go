package compat

import (
	"strconv"
	"time"
)

// JSON shapes of the config API (config-v1.md §3). Nullable Java fields are
// pointers: nil is written as null, as Spring Boot's Jackson does.

// ConfigInfo is model.ConfigInfo: id (as a string), dataId, group, content,
// md5, tenant, appName, type.
type ConfigInfo struct {
	ID      int64
	DataID  string
	Group   string
	Content *string
	MD5     *string
	Tenant  *string
	AppName *string
	Type    *string
}

func (c *ConfigInfo) appendFields(w *JSON) {
	w.Key("id").Str(strconv.FormatInt(c.ID, 10))
	w.Key("dataId").Str(c.DataID)
	w.Key("group").Str(c.Group)
	w.Key("content")
	strOrNull(w, c.Content)
	w.Key("md5")
	strOrNull(w, c.MD5)
	w.Key("tenant")
	strOrNull(w, c.Tenant)
	w.Key("appName")
	strOrNull(w, c.AppName)
	w.Key("type")
	strOrNull(w, c.Type)
}

// AppendJSON writes the object.
func (c *ConfigInfo) AppendJSON(w *JSON) {
	w.BeginObject()
	c.appendFields(w)
	w.EndObject()
}

// ConfigAllInfo is model.ConfigAllInfo (GET ?show=all): ConfigInfo plus
// createTime, modifyTime, createUser, createIp, desc, use, effect, schema,
// configTags.
type ConfigAllInfo struct {
	ConfigInfo
	CreateTime, ModifyTime int64
	CreateUser, CreateIP   *string
	Desc, Use, Effect      *string
	Schema, ConfigTags     *string
}

// AppendJSON writes the object.
func (c *ConfigAllInfo) AppendJSON(w *JSON) {
	w.BeginObject()
	c.ConfigInfo.appendFields(w)
	w.Key("createTime").Int(c.CreateTime)
	w.Key("modifyTime").Int(c.ModifyTime)
	for _, kv := range []struct {
		k string
		v *string
	}{{"createUser", c.CreateUser}, {"createIp", c.CreateIP}, {"desc", c.Desc}, {"use", c.Use},
		{"effect", c.Effect}, {"schema", c.Schema}, {"configTags", c.ConfigTags}} {
		w.Key(kv.k)
		strOrNull(w, kv.v)
	}
	w.EndObject()
}

// ConfigAdvanceInfo is model.ConfigAdvanceInfo (GET /configs/catalog).
type ConfigAdvanceInfo struct {
	CreateTime, ModifyTime int64
	CreateUser, CreateIP   *string
	Desc, Use, Effect      *string
	Type, Schema           *string
	ConfigTags             *string
}

// AppendJSON writes the object.
func (c *ConfigAdvanceInfo) AppendJSON(w *JSON) {
	w.BeginObject()
	w.Key("createTime").Int(c.CreateTime)
	w.Key("modifyTime").Int(c.ModifyTime)
	for _, kv := range []struct {
		k string
		v *string
	}{{"createUser", c.CreateUser}, {"createIp", c.CreateIP}, {"desc", c.Desc}, {"use", c.Use},
		{"effect", c.Effect}, {"type", c.Type}, {"schema", c.Schema}, {"configTags", c.ConfigTags}} {
		w.Key(kv.k)
		strOrNull(w, kv.v)
	}
	w.EndObject()
}

// ConfigInfo4Beta is model.ConfigInfo4Beta (GET ?beta=true): ConfigInfo plus
// betaIps.
type ConfigInfo4Beta struct {
	ConfigInfo
	BetaIps *string
}

// AppendJSON writes the object.
func (c *ConfigInfo4Beta) AppendJSON(w *JSON) {
	w.BeginObject()
	c.ConfigInfo.appendFields(w)
	w.Key("betaIps")
	strOrNull(w, c.BetaIps)
	w.EndObject()
}

// ConfigHistoryInfo is model.ConfigHistoryInfo (config-v1.md §3.14).
type ConfigHistoryInfo struct {
	ID                       int64 // nid
	DataID, Group, Tenant    string
	AppName                  *string
	MD5, Content             *string
	SrcIP, SrcUser           *string
	OpType                   string
	CreatedTime, LastModTime time.Time
}

// AppendJSON writes the object; times in the location of the given values.
func (h *ConfigHistoryInfo) AppendJSON(w *JSON) {
	w.BeginObject()
	w.Key("id").Str(strconv.FormatInt(h.ID, 10))
	w.Key("lastId").Int(-1)
	w.Key("dataId").Str(h.DataID)
	w.Key("group").Str(h.Group)
	w.Key("tenant").Str(h.Tenant)
	w.Key("appName")
	strOrNull(w, h.AppName)
	w.Key("md5")
	strOrNull(w, h.MD5)
	w.Key("content")
	strOrNull(w, h.Content)
	w.Key("srcIp")
	strOrNull(w, h.SrcIP)
	w.Key("srcUser")
	strOrNull(w, h.SrcUser)
	w.Key("opType").Str(h.OpType)
	w.Key("createdTime").Str(JacksonDate(h.CreatedTime))
	w.Key("lastModifiedTime").Str(JacksonDate(h.LastModTime))
	w.EndObject()
}

// HistoryOpType pads an op type to Derby's char(10) (config-v1.md §3.14).
func HistoryOpType(op string) string {
	for len(op) < 10 {
		op += " "
	}
	return op
}

// HistoryCreatedTime is Derby's constant gmt_create default for history rows
// (2010-05-05 00:00:00.000 in the server's time zone).
func HistoryCreatedTime(loc *time.Location) time.Time {
	return time.Date(2010, 5, 5, 0, 0, 0, 0, loc)
}

// JacksonDate formats a java.util.Date as Spring Boot's Jackson does:
// yyyy-MM-dd'T'HH:mm:ss.SSS+HH:MM in t's location.
func JacksonDate(t time.Time) string {
	return t.Format("2006-01-02T15:04:05.000-07:00")
}

// AppendPage writes model.Page: totalCount, pageNumber, pagesAvailable,
// pageItems (n items written by item).
func AppendPage(w *JSON, totalCount, pageNumber, pagesAvailable, n int, item func(w *JSON, i int)) {
	w.BeginObject()
	w.Key("totalCount").Int(int64(totalCount))
	w.Key("pageNumber").Int(int64(pageNumber))
	w.Key("pagesAvailable").Int(int64(pagesAvailable))
	w.Key("pageItems").BeginArray()
	for i := 0; i < n; i++ {
		item(w, i)
	}
	w.EndArray()
	w.EndObject()
}

// ListenerStatus is GroupkeyListenserStatus (sic): {"collectStatus":200,
// "lisentersGroupkeyStatus":{...}} with keys in the given order.
func ListenerStatus(keys []string, m map[string]string) []byte {
	w := NewJSON(64 + 64*len(keys))
	w.BeginObject()
	w.Key("collectStatus").Int(200)
	w.Key("lisentersGroupkeyStatus").StrMap(keys, m, false)
	w.EndObject()
	return w.Bytes()
}

// ImportResult is the HashMap data of an import/clone answer
// (config-v1.md §3.10); nil slices are omitted.
type ImportResult struct {
	SuccCount, SkipCount int
	FailData             []ChangedKey // dataId, group
	SkipData             []ChangedKey
	Unrecognized         []string // itemName values; nil = key absent
	HasUnrecognized      bool
}

// AppendJSON writes the map as Java does: a HashMap(4) filled with
// succCount, skipCount, failData and skipData (when not empty), then the
// controller's unrecognizedCount and unrecognizedData.
func (r *ImportResult) AppendJSON(w *JSON) {
	kv := func(l []ChangedKey) {
		w.BeginArray()
		for _, k := range l {
			w.BeginObject().Key("dataId").Str(k.DataID).Key("group").Str(k.Group).EndObject()
		}
		w.EndArray()
	}
	keys := []string{"succCount", "skipCount"}
	if len(r.FailData) > 0 {
		keys = append(keys, "failData")
	}
	if len(r.SkipData) > 0 {
		keys = append(keys, "skipData")
	}
	if r.HasUnrecognized {
		keys = append(keys, "unrecognizedCount", "unrecognizedData")
	}
	w.BeginObject()
	for _, k := range JavaHashOrderStrings(keys, 4) {
		w.Key(k)
		switch k {
		case "succCount":
			w.Int(int64(r.SuccCount))
		case "skipCount":
			w.Int(int64(r.SkipCount))
		case "failData":
			kv(r.FailData)
		case "skipData":
			kv(r.SkipData)
		case "unrecognizedCount":
			w.Int(int64(len(r.Unrecognized)))
		case "unrecognizedData":
			w.BeginArray()
			for _, s := range r.Unrecognized {
				w.BeginObject().Key("itemName").Str(s).EndObject()
			}
			w.EndArray()
		}
	}
	w.EndObject()
}

// Import/clone result codes (ResultCodeEnum, config-v1.md §3.10).
const (
	ResultNamespaceNotExist = 100001 // 目标 namespace 不存在
	ResultMetadataIllegal   = 100002 // 导入的元数据非法
	ResultDataValidation    = 100003 // 未读取到合法数据
	ResultParsingDataFailed = 100004 // 解析数据失败
	ResultDataEmpty         = 100005 // 导入的文件数据为空
	ResultNoSelectedConfig  = 100006 // 没有选择任何配置
)

// ResultCodeMessage returns the message of a ResultCodeEnum code.
func ResultCodeMessage(code int) string {
	switch code {
	case 200:
		return "处理成功"
	case 500:
		return "服务器内部错误"
	case ResultNamespaceNotExist:
		return "目标 namespace 不存在"
	case ResultMetadataIllegal:
		return "导入的元数据非法"
	case ResultDataValidation:
		return "未读取到合法数据"
	case ResultParsingDataFailed:
		return "解析数据失败"
	case ResultDataEmpty:
		return "导入的文件数据为空"
	case ResultNoSelectedConfig:
		return "没有选择任何配置"
	}
	return ""
}

// ResultCodeJSON is RestResultUtils.buildResult(code, data) with data
// {"succCount":0} (succCount0) or {} .
func ResultCodeJSON(code int, succCount0 bool) []byte {
	msg := ResultCodeMessage(code)
	return RestResultJSON(code, &msg, func(w *JSON) {
		w.BeginObject()
		if succCount0 {
			w.Key("succCount").Int(0)
		}
		w.EndObject()
	})
}

// Namespace is console model.Namespace / NamespaceAllInfo
// (console-auth-core-v1.md §2).
type Namespace struct {
	ID, ShowName string
	Quota        int
	ConfigCount  int
	Type         int
	Desc         *string // NamespaceAllInfo only
}

// AppendJSON writes a list item (no namespaceDesc).
func (n *Namespace) AppendJSON(w *JSON) {
	w.BeginObject()
	n.fields(w)
	w.EndObject()
}

func (n *Namespace) fields(w *JSON) {
	w.Key("namespace").Str(n.ID)
	w.Key("namespaceShowName").Str(n.ShowName)
	w.Key("quota").Int(int64(n.Quota))
	w.Key("configCount").Int(int64(n.ConfigCount))
	w.Key("type").Int(int64(n.Type))
}

// AppendAllJSON writes NamespaceAllInfo (with namespaceDesc).
func (n *Namespace) AppendAllJSON(w *JSON) {
	w.BeginObject()
	n.fields(w)
	w.Key("namespaceDesc")
	strOrNull(w, n.Desc)
	w.EndObject()
}

func strOrNull(w *JSON, s *string) {
	if s == nil {
		w.Null()
		return
	}
	w.Str(*s)
}
