package compat

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Golden values come from config-v1.md (examples read from Nacos 1.4.8 and
// its unit tests), not from this package's output.

func cfgGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/config/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGroupKey(t *testing.T) {
	t.Parallel()
	cases := []struct{ d, g, t, key string }{
		{"a.yaml", "DEFAULT_GROUP", "", "a.yaml+DEFAULT_GROUP"},
		{"a.yaml", "DEFAULT_GROUP", "ns-1", "a.yaml+DEFAULT_GROUP+ns-1"},
		{"a+b", "g%1", "t", "a%2Bb+g%251+t"},
	}
	for _, c := range cases {
		if got := GroupKey(c.d, c.g, c.t); got != c.key {
			t.Errorf("GroupKey(%q,%q,%q) = %q, want %q", c.d, c.g, c.t, got, c.key)
		}
		d, g, tn, err := ParseGroupKey(c.key)
		if err != nil || d != c.d || g != c.g || tn != c.t {
			t.Errorf("ParseGroupKey(%q) = %q %q %q %v", c.key, d, g, tn, err)
		}
	}
	for _, bad := range []string{"a", "a+b+c+d", "a%zz+b", "+b", "a%2"} {
		if _, _, _, err := ParseGroupKey(bad); !errors.Is(err, ErrInvalidGroupKey) {
			t.Errorf("ParseGroupKey(%q) err = %v", bad, err)
		}
	}
}

func TestEncodeChangedKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		keys []ChangedKey
		want string
	}{
		{[]ChangedKey{{"a.yaml", "DEFAULT_GROUP", ""}}, "a.yaml%02DEFAULT_GROUP%01\n"},
		{[]ChangedKey{{"a.yaml", "DEFAULT_GROUP", "ns-1"}, {"b", "G", ""}}, "a.yaml%02DEFAULT_GROUP%02ns-1%01b%02G%01\n"},
		{[]ChangedKey{{"中 x:y", "G*_-.", ""}}, "%E4%B8%AD+x%3Ay%02G*_-.%01\n"},
		{nil, ""},
	}
	for _, c := range cases {
		if got := EncodeChangedKeys(c.keys); got != c.want {
			t.Errorf("EncodeChangedKeys(%v) = %q, want %q", c.keys, got, c.want)
		}
	}
}

func TestParseListeningConfigs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want []ListenEntry
		err  bool
	}{
		{"a\x02G\x02m\x01", []ListenEntry{{"a", "G", "m", ""}}, false},
		{"a\x02G\x02m\x02ns\x01b\x02G\x02\x01", []ListenEntry{{"a", "G", "m", "ns"}, {"b", "G", "", ""}}, false},
		{"a\x02G\x02m\x02\x01", []ListenEntry{{"a", "G", "m", ""}}, false}, // empty tenant = none
		{"a\x02G\x02m1\x01a\x02G\x02m2\x01", []ListenEntry{{"a", "G", "m2", ""}}, false},
		{"a\x02G\x02m\x01trailing", []ListenEntry{{"a", "G", "m", ""}}, false},
		{"", nil, false},
		{"a\x02G\x01", nil, true},
		{"a\x01", nil, true},
		{"a\x02b\x02c\x02d\x02e\x01", nil, true},
	}
	for _, c := range cases {
		got, err := ParseListeningConfigs(c.in)
		if (err != nil) != c.err || (!c.err && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("ParseListeningConfigs(%q) = %v, %v; want %v err=%v", c.in, got, err, c.want, c.err)
		}
	}
	var sb strings.Builder
	for i := 0; i <= ConfigMaxListenEntries; i++ {
		sb.WriteString("d" + strconv.Itoa(i) + "\x02G\x02\x01")
	}
	if _, err := ParseListeningConfigs(sb.String()); err != ErrInvalidProbe {
		t.Errorf("10001 entries: err = %v", err)
	}
	if ErrInvalidProbe.Status != 400 || ErrInvalidProbe.Body != "caused: invalid probeModify;" {
		t.Errorf("ErrInvalidProbe = %+v", ErrInvalidProbe)
	}
}

func TestJavaURLDecode(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want, err string }{
		{"a+b%02%E4%B8%AD", "a b\x02中", ""},
		{"\x02raw\x01", "\x02raw\x01", ""},
		{"%ff", "\uFFFD", ""},
		// Java 17's messages, as the 1.4.8 reference gives them
		{"a%zz", "", `URLDecoder: Illegal hex characters in escape (%) pattern - Error at index 0 in: "zz"`},
		{"a%1z", "", `URLDecoder: Illegal hex characters in escape (%) pattern - Error at index 1 in: "1z"`},
		{"a%-1", "", "URLDecoder: Illegal hex characters in escape (%) pattern - negative value"},
		{"a%+1%-0", "a\x01\x00", ""},
		{"a%2", "", "URLDecoder: Incomplete trailing escape (%) pattern"},
	}
	for _, c := range cases {
		got, err := JavaURLDecode(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("JavaURLDecode(%q) err = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("JavaURLDecode(%q) = %q, %v", c.in, got, err)
		}
	}
}

func TestListenOrderIsJavaHashMapOrder(t *testing.T) {
	t.Parallel()
	// HashMap(50) → 64 buckets; "b+G" hashes to a lower bucket than "a+G".
	keys := []string{"a+G", "b+G"}
	got := ListenOrder(keys)
	want := JavaHashOrderStrings(keys, 64)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ListenOrder = %v, want %v", got, want)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		err    error
		status int
		body   string
	}{
		{"dataId", CheckConfigParams("a b", "G", "c", 0), 500, "caused: invalid dataId : a b;"},
		{"dataId trimmed ok", CheckConfigParams(" ab ", "G", "c", 0), 0, ""},
		{"chinese ok", CheckConfigParams("中文.yaml", "组", "c", 0), 0, ""},
		{"emoji", CheckConfigParams("a😀", "G", "c", 0), 500, "caused: invalid dataId : a😀;"},
		{"group untrimmed", CheckConfigParams("a", " G", "c", 0), 500, "caused: invalid group :  G;"},
		{"blank content", CheckConfigParams("a", "G", "\t", 0), 500, "caused: content is blank : \t;"},
		{"content limit", CheckConfigParams("a", "G", "😀😀", 3), 500, "caused: invalid content, over 3;"},
		{"tenant", CheckTenant("a/b"), 400, "caused: invalid tenant;"},
		{"tenant long", CheckTenant(strings.Repeat("a", 129)), 400, "caused: too long tag, over 128;"},
		{"tag", CheckTag("a b"), 400, "caused: invalid tag : a b;"},
		{"tag long", CheckTag(strings.Repeat("a", 17)), 400, "caused: too long tag, over 16;"},
		{"tags", CheckAdvance(ConfigAdvance{ConfigTags: cfgPtr("a,b,c,d,e,f")}), 500, "caused: too much config_tags, over 5;"},
		{"tags trailing empty", CheckAdvance(ConfigAdvance{ConfigTags: cfgPtr("a,b,c,d,e,,,")}), 0, ""},
		{"tag 64", CheckAdvance(ConfigAdvance{ConfigTags: cfgPtr(strings.Repeat("t", 65))}), 500, "caused: too long tag, over 64;"},
		{"schema", CheckAdvance(ConfigAdvance{Schema: cfgPtr(strings.Repeat("s", 32769))}), 500, "caused: too long schema, over 32768;"},
	}
	for _, c := range cases {
		if c.status == 0 {
			if c.err != nil {
				t.Errorf("%s: unexpected %v", c.name, c.err)
			}
			continue
		}
		var ce *Error
		if !errors.As(c.err, &ce) || ce.Status != c.status || ce.Body != c.body || ce.ContentType != "" {
			t.Errorf("%s: got %+v, want %d %q", c.name, c.err, c.status, c.body)
		}
	}
}

func cfgPtr(s string) *string { return &s }

func TestConfigTypes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"yaml": "yaml", "YAML": "text", "": "text", "unset": "unset", "toml": "text"} {
		if got := NormalizeConfigType(in); got != want {
			t.Errorf("NormalizeConfigType(%q) = %q", in, got)
		}
	}
	for in, want := range map[string]string{"json": "application/json;charset=UTF-8", "xml": "application/xml;charset=UTF-8",
		"htm": "text/html;charset=UTF-8", "yaml": "text/plain;charset=UTF-8", "unset": "text/plain;charset=UTF-8"} {
		if got := ConfigContentType(in); got != want {
			t.Errorf("ConfigContentType(%q) = %q", in, got)
		}
	}
	if ProcessNamespace(" Public ") != "" || ProcessNamespace("NULL") != "" || ProcessNamespace(" dev ") != "dev" {
		t.Error("ProcessNamespace")
	}
	if VersionNumber("1.4.8") != 148 || VersionNumber("2.0.4") != 204 {
		t.Error("VersionNumber")
	}
}

func TestConfigJSONGolden(t *testing.T) {
	t.Parallel()
	w := NewJSON(0)
	AppendPage(w, 2, 1, 1, 1, func(w *JSON, _ int) {
		ci := ConfigInfo{ID: 123, DataID: "a.yaml", Group: "DEFAULT_GROUP", Content: cfgPtr("k: v"), Tenant: cfgPtr(""), AppName: cfgPtr(""), Type: cfgPtr("yaml")}
		ci.AppendJSON(w)
	})
	if got, want := w.String(), cfgGolden(t, "page.json"); got != want {
		t.Errorf("page\n got %s\nwant %s", got, want)
	}
	cst := time.FixedZone("CST", 8*3600)
	h := ConfigHistoryInfo{ID: 5, DataID: "a", Group: "DEFAULT_GROUP", AppName: cfgPtr(""), SrcIP: cfgPtr("10.0.0.1"),
		OpType: HistoryOpType("U"), CreatedTime: HistoryCreatedTime(cst), LastModTime: time.Date(2024, 1, 2, 3, 4, 5, 0, cst)}
	w = NewJSON(0)
	h.AppendJSON(w)
	if got, want := w.String(), cfgGolden(t, "history_item.json"); got != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
	a := ConfigAllInfo{ConfigInfo: ConfigInfo{ID: 1730000000000000000, DataID: "a.yaml", Group: "DEFAULT_GROUP", Content: cfgPtr("k: v"),
		MD5: cfgPtr("<hex>"), Tenant: cfgPtr(""), AppName: cfgPtr(""), Type: cfgPtr("yaml")}, CreateTime: 1700000000000, ModifyTime: 1700000000000,
		CreateIP: cfgPtr("10.0.0.1"), ConfigTags: cfgPtr("t1,t2")}
	w = NewJSON(0)
	a.AppendJSON(w)
	if got, want := w.String(), cfgGolden(t, "all_info.json"); got != want {
		t.Errorf("all info\n got %s\nwant %s", got, want)
	}
	if got := string(ResultCodeJSON(ResultNamespaceNotExist, true)); got != `{"code":100001,"message":"目标 namespace 不存在","data":{"succCount":0}}` {
		t.Errorf("result code %s", got)
	}
	r := ImportResult{SuccCount: 1, SkipCount: 2, SkipData: []ChangedKey{{DataID: "d", Group: "g"}}, FailData: []ChangedKey{{DataID: "f", Group: "g"}}, HasUnrecognized: true, Unrecognized: []string{"x"}}
	w = NewJSON(0)
	r.AppendJSON(w)
	if got := w.String(); got != `{"skipData":[{"dataId":"d","group":"g"}],"succCount":1,"unrecognizedCount":1,"failData":[{"dataId":"f","group":"g"}],"skipCount":2,"unrecognizedData":[{"itemName":"x"}]}` {
		t.Errorf("import result %s", got)
	}
}

func TestExportZipLayout(t *testing.T) {
	t.Parallel()
	items := []ExportItem{
		{Group: "testGroup1", DataID: "testData1", Content: "c1", Type: cfgPtr("text")},
		{Group: "testGroup2", DataID: "testData2", Content: "c2", AppName: cfgPtr("testAppName"), Desc: cfgPtr("test desc"), Type: cfgPtr("yaml")},
	}
	if got, want := ExportMetadataYAML(items), cfgGolden(t, "metadata_v2.yml"); got != want {
		t.Errorf("metadata v2\n got %q\nwant %q", got, want)
	}
	v1 := []ExportItem{{Group: "DEFAULT_GROUP", DataID: "app.yaml", AppName: cfgPtr("myApp")}, {Group: "G", DataID: "x", AppName: cfgPtr(" ")}}
	if got, want := ExportMetaV1Text(v1), cfgGolden(t, "meta_v1.yml"); got != want {
		t.Errorf("meta v1 %q, want %q", got, want)
	}
	now := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	if got := ExportFileName(now); got != "nacos_config_export_20240102030405.zip" {
		t.Errorf("file name %s", got)
	}
	for _, v2 := range []bool{false, true} {
		zb, err := ExportZip(items, v2, now)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range zr.File {
			if f.Method != zip.Deflate {
				t.Errorf("%s not deflated", f.Name)
			}
			names = append(names, f.Name)
		}
		want := "testGroup1/testData1,testGroup2/testData2,.meta.yml"
		if v2 {
			want = "testGroup1/testData1,testGroup2/testData2,.metadata.yml"
		}
		if strings.Join(names, ",") != want {
			t.Errorf("v2=%v entries %v", v2, names)
		}
		arc, err := ReadImportZip(zb)
		if err != nil || len(arc.Items) != 2 || arc.Items[1].Content != "c2" || arc.Items[1].AppName == nil || *arc.Items[1].AppName != "testAppName" {
			t.Errorf("v2=%v round trip %+v %v", v2, arc, err)
		}
	}
	if got := yamlScalar("true"); got != "'true'" {
		t.Errorf("yamlScalar(true) = %s", got)
	}
	if got := yamlScalar(""); got != "''" {
		t.Errorf("yamlScalar(\"\") = %s", got)
	}
}

func TestReadImportZipErrors(t *testing.T) {
	t.Parallel()
	mk := func(files ...string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for i := 0; i < len(files); i += 2 {
			w, _ := zw.Create(files[i])
			_, _ = io.WriteString(w, files[i+1])
		}
		_ = zw.Close()
		return buf.Bytes()
	}
	code := func(err error) int {
		var ie *ImportError
		if errors.As(err, &ie) {
			return ie.Code
		}
		return 0
	}
	if _, err := ReadImportZip([]byte("junk")); code(err) != ResultParsingDataFailed {
		t.Errorf("junk: %v", err)
	}
	if _, err := ReadImportZip(mk(".meta.yml", "no-equals", "G/a", "x")); code(err) != ResultMetadataIllegal {
		t.Errorf("bad v1 meta: %v", err)
	}
	if _, err := ReadImportZip(mk(".metadata.yml", "metadata:\n- dataId: a\n  group: G\n", "G/a", "x")); code(err) != ResultMetadataIllegal {
		t.Errorf("v2 without type: %v", err)
	}
	arc, err := ReadImportZip(mk(".metadata.yml", "metadata:\n- dataId: a\n  group: G\n  type: text\n- dataId: b\n  group: G\n  type: text\n", "G/a", "x", "G/c", "y"))
	if err != nil || len(arc.Items) != 1 || !reflect.DeepEqual(arc.Unrecognized, []string{"未在元数据中找到: G/c", "未在文件中找到: G/b"}) {
		t.Errorf("v2 unrecognized: %+v %v", arc, err)
	}
	arc, err = ReadImportZip(mk("dir/", "", "a/b/c", "x", "G/d", "y"))
	if err != nil || len(arc.Items) != 1 || !reflect.DeepEqual(arc.Unrecognized, []string{"a/b/c"}) {
		t.Errorf("v1 unrecognized: %+v %v", arc, err)
	}
}

// TestConfigLengthsOnWritesOnly: a dataId or group longer than its
// config_info column is refused on a write and simply not found on a read
// (Java reads a longer key as absent; make conformance-fuzz found nacosd
// answering a read with the write's error).
func TestConfigLengthsOnWritesOnly(t *testing.T) {
	long := strings.Repeat("g", ConfigMaxGroupLen+1)
	if err := CheckConfigParams("d", long, "content", 0); err != nil {
		t.Fatalf("read of a long group: %v", err)
	}
	if err := CheckConfigWrite("d", long, "x", 0); err == nil || !strings.Contains(err.Error(), "too long group") {
		t.Fatalf("write of a long group: %v", err)
	}
	if err := CheckConfigWrite(strings.Repeat("d", ConfigMaxDataIDLen+1), "g", "x", 0); err == nil || !strings.Contains(err.Error(), "too long dataId") {
		t.Fatalf("write of a long dataId: %v", err)
	}
	if err := CheckConfigWrite("d", "g", "x", 0); err != nil {
		t.Fatalf("write: %v", err)
	}
}
