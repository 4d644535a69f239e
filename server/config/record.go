package config

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
)

// Buckets the config service keeps in raftstore. Names and record encodings
// live on disk: never rename a bucket, only add record versions.
const (
	BucketInfo    = "cfg.info"    // groupKey → Info (config_info + config_tags_relation)
	BucketBeta    = "cfg.beta"    // groupKey → Beta (config_info_beta)
	BucketTag     = "cfg.tag"     // groupKey NUL tag → Tag (config_info_tag)
	BucketHistory = "cfg.history" // groupKey NUL nid(20 digits) → History (his_config_info); on disk
	// BucketHistoryNid indexes history by nid: nid(20 digits) → modified
	// (ms, decimal) NUL history key; on disk. Rows written before it existed
	// have no entry (HistoryByNid falls back to a scan).
	BucketHistoryNid = "cfg.history.nid"
	BucketMeta       = "cfg.meta"  // "nid" → last history nid (decimal)
	BucketTenant     = "ns.tenant" // namespace id → Tenant (tenant_info)

	metaNidKey = "nid"
)

// DiskBuckets are the buckets the config service wants kept on disk rather
// than in memory (raftstore.Config.DiskBuckets): history grows with every
// publish and is rarely read.
func DiskBuckets() []string { return []string{BucketHistory, BucketHistoryNid} }

// historyOps writes history row h of groupKey and its nid index entry.
func historyOps(groupKey string, h *History) []raftstore.Op {
	k := historyKey(groupKey, h.Nid)
	return []raftstore.Op{
		{Kind: raftstore.OpPut, Bucket: BucketHistory, Key: k, Value: encode(h)},
		{Kind: raftstore.OpPut, Bucket: BucketHistoryNid, Key: padNid(h.Nid), Value: []byte(strconv.FormatInt(h.Modified, 10) + "\x00" + k)},
	}
}

// nidIndexEntry splits a BucketHistoryNid value.
func nidIndexEntry(v []byte) (modified int64, historyKey string, ok bool) {
	m, k, found := strings.Cut(string(v), "\x00")
	if !found {
		return 0, "", false
	}
	n, err := strconv.ParseInt(m, 10, 64)
	return n, k, err == nil
}

// recordV1 prefixes every stored record: one version byte, then JSON.
const recordV1 byte = 1

// Info is a main config (config_info row plus its tag relations).
type Info struct {
	ID       int64   `json:"id"`
	DataID   string  `json:"dataId"`
	Group    string  `json:"group"`
	Tenant   string  `json:"tenant,omitempty"`
	AppName  string  `json:"appName,omitempty"`
	Content  string  `json:"content"`
	MD5      string  `json:"md5"`
	Created  int64   `json:"created"`
	Modified int64   `json:"modified"`
	SrcUser  *string `json:"srcUser,omitempty"`
	SrcIP    string  `json:"srcIp,omitempty"`
	Desc     *string `json:"desc,omitempty"`
	Use      *string `json:"use,omitempty"`
	Effect   *string `json:"effect,omitempty"`
	Type     string  `json:"type,omitempty"`
	Schema   *string `json:"schema,omitempty"`
	// Tags are the config_tags relation rows (tag names, in insert order).
	Tags []string `json:"tags,omitempty"`
}

// Beta is a gray release of a config (config_info_beta).
type Beta struct {
	ID       int64  `json:"id"`
	DataID   string `json:"dataId"`
	Group    string `json:"group"`
	Tenant   string `json:"tenant,omitempty"`
	AppName  string `json:"appName,omitempty"`
	Content  string `json:"content"`
	MD5      string `json:"md5"`
	BetaIps  string `json:"betaIps"`
	Created  int64  `json:"created"`
	Modified int64  `json:"modified"`
	SrcIP    string `json:"srcIp,omitempty"`
}

// Tag is a tag variant of a config (config_info_tag).
type Tag struct {
	ID       int64  `json:"id"`
	DataID   string `json:"dataId"`
	Group    string `json:"group"`
	Tenant   string `json:"tenant,omitempty"`
	Tag      string `json:"tag"`
	AppName  string `json:"appName,omitempty"`
	Content  string `json:"content"`
	MD5      string `json:"md5"`
	Created  int64  `json:"created"`
	Modified int64  `json:"modified"`
	SrcIP    string `json:"srcIp,omitempty"`
}

// History is a his_config_info row.
type History struct {
	Nid      int64   `json:"nid"`
	ID       int64   `json:"id"` // config id (U, D) or a fresh id (I)
	DataID   string  `json:"dataId"`
	Group    string  `json:"group"`
	Tenant   string  `json:"tenant,omitempty"`
	AppName  string  `json:"appName,omitempty"`
	Content  string  `json:"content"`
	MD5      string  `json:"md5"`
	SrcUser  *string `json:"srcUser,omitempty"`
	SrcIP    string  `json:"srcIp,omitempty"`
	Op       string  `json:"op"` // I, U, D
	Modified int64   `json:"modified"`
	// Type is the config type of the content kept (2.x's extInfo); ""
	// in records written before it was kept.
	Type string `json:"type,omitempty"`
}

// Tenant is a namespace (tenant_info).
type Tenant struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Desc     *string `json:"desc,omitempty"`
	Source   string  `json:"source"`
	Created  int64   `json:"created"`
	Modified int64   `json:"modified"`
}

// recordV2 is the encoding of the records that carry a content (Info, Beta,
// Tag, History): the version byte, the length of a JSON header (uvarint),
// the header (the record with an empty content), then the content's bytes
// as they are. Decoding it reads no content byte: the decoded Content
// shares the stored record's memory (records are never modified once
// stored, see raftstore.Record), so a config is held once, not as a JSON
// record and again as a string, and nothing validates or unescapes 1 MiB
// of JSON at start. v1 records (version byte, then JSON) still decode.
const recordV2 byte = 2

func encode(v any) []byte {
	switch r := v.(type) {
	case *Info:
		c := *r
		c.Content = ""
		return encodeV2(&c, r.Content)
	case *Beta:
		c := *r
		c.Content = ""
		return encodeV2(&c, r.Content)
	case *Tag:
		c := *r
		c.Content = ""
		return encodeV2(&c, r.Content)
	case *History:
		c := *r
		c.Content = ""
		return encodeV2(&c, r.Content)
	}
	b, err := json.Marshal(v)
	if err != nil { // only plain fields: cannot fail
		panic(fmt.Sprintf("config: encode %T: %v", v, err))
	}
	return append([]byte{recordV1}, b...)
}

func encodeV2(header any, content string) []byte {
	h, err := json.Marshal(header)
	if err != nil { // only plain fields: cannot fail
		panic(fmt.Sprintf("config: encode %T: %v", header, err))
	}
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(h)+len(content))
	b = append(b, recordV2)
	b = binary.AppendUvarint(b, uint64(len(h)))
	b = append(b, h...)
	return append(b, content...)
}

// contentOf is the Content field of the records that have one.
func contentOf(v any) *string {
	switch r := v.(type) {
	case *Info:
		return &r.Content
	case *Beta:
		return &r.Content
	case *Tag:
		return &r.Content
	case *History:
		return &r.Content
	}
	return nil
}

// decode reads a stored record into v. A v2 record's Content points into
// b, which must not change afterwards (stored records never do).
func decode(b []byte, v any) error {
	switch {
	case len(b) > 0 && b[0] == recordV1:
		if err := json.Unmarshal(b[1:], v); err != nil {
			return fmt.Errorf("config: decode %T: %w", v, err)
		}
		return nil
	case len(b) > 0 && b[0] == recordV2:
		n, k := binary.Uvarint(b[1:])
		c := contentOf(v)
		if k <= 0 || n > uint64(len(b)-1-k) || c == nil {
			return fmt.Errorf("config: decode %T: damaged v2 record", v)
		}
		body := b[1+k:]
		if !decodeHeaderFast(body[:n], v) {
			if err := json.Unmarshal(body[:n], v); err != nil {
				return fmt.Errorf("config: decode %T: %w", v, err)
			}
		}
		if raw := body[n:]; len(raw) > 0 {
			*c = unsafe.String(unsafe.SliceData(raw), len(raw))
		} else {
			*c = ""
		}
		return nil
	}
	return fmt.Errorf("config: decode %T: unknown record version", v)
}

// MD5Hex is the md5 of the UTF-8 content as 32 lower-case hex digits.
func MD5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func tagKey(groupKey, tag string) string { return groupKey + "\x00" + tag }

func historyKey(groupKey string, nid int64) string {
	return groupKey + "\x00" + fmt.Sprintf("%020d", nid)
}

// splitNulKey splits "groupKey NUL suffix".
func splitNulKey(k string) (string, string, bool) {
	i := strings.LastIndexByte(k, 0)
	if i < 0 {
		return "", "", false
	}
	return k[:i], k[i+1:], true
}

func historyNid(k string) (int64, bool) {
	_, s, ok := splitNulKey(k)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func groupKeyOf(dataID, group, tenant string) string { return compat.GroupKey(dataID, group, tenant) }
