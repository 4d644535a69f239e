package compat

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Export and import archives of the config console (config-v1.md §3.9,
// §3.10): entries "<group>/<dataId>" plus a ".meta.yml" (v1) or
// ".metadata.yml" (v2) metadata entry.

// Metadata entry names.
const (
	ExportMetaV1 = ".meta.yml"
	ExportMetaV2 = ".metadata.yml"
)

// ExportItem is one config of an export.
type ExportItem struct {
	Group, DataID, Content string
	AppName, Desc, Type    *string
}

// ExportFileName is the Content-Disposition file name for an export made at t
// (server local time).
func ExportFileName(t time.Time) string {
	return "nacos_config_export_" + t.Format("20060102150405") + ".zip"
}

// ExportZip writes the archive: one DEFLATE entry per item, then the v1 or
// v2 metadata entry; every entry's time is now.
func ExportZip(items []ExportItem, v2 bool, now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data string) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: now})
		if err != nil {
			return fmt.Errorf("compat: export entry %q: %w", name, err)
		}
		if _, err := io.WriteString(w, data); err != nil {
			return fmt.Errorf("compat: export entry %q: %w", name, err)
		}
		return nil
	}
	for _, it := range items {
		if err := add(it.Group+"/"+it.DataID, it.Content); err != nil {
			return nil, err
		}
	}
	if v2 {
		if err := add(ExportMetaV2, ExportMetadataYAML(items)); err != nil {
			return nil, err
		}
	} else if meta := ExportMetaV1Text(items); meta != "" {
		if err := add(ExportMetaV1, meta); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compat: export zip: %w", err)
	}
	return buf.Bytes(), nil
}

// metaV1Key is "<group>.<dataId with its last '.' replaced by '~'>.app".
func metaV1Key(group, dataID string) string {
	if i := strings.LastIndexByte(dataID, '.'); i >= 0 {
		dataID = dataID[:i] + "~" + dataID[i+1:]
	}
	return group + "." + dataID + ".app"
}

// ExportMetaV1Text is the .meta.yml text: one "key=appName\r\n" line per item
// with a non-blank appName; "" when there is none.
func ExportMetaV1Text(items []ExportItem) string {
	var b strings.Builder
	for _, it := range items {
		if it.AppName == nil || JavaIsBlank(*it.AppName) {
			continue
		}
		b.WriteString(metaV1Key(it.Group, it.DataID))
		b.WriteByte('=')
		b.WriteString(*it.AppName)
		b.WriteString("\r\n")
	}
	return b.String()
}

// ExportMetadataYAML is SnakeYAML's dumpAsMap of {metadata: [items]} in block
// style, null properties omitted, keys alphabetical.
func ExportMetadataYAML(items []ExportItem) string {
	if len(items) == 0 {
		return "metadata: []\n"
	}
	var b strings.Builder
	b.WriteString("metadata:\n")
	for _, it := range items {
		first := true
		field := func(k string, v *string) {
			if v == nil {
				return
			}
			if first {
				b.WriteString("- ")
				first = false
			} else {
				b.WriteString("  ")
			}
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(yamlScalar(*v))
			b.WriteByte('\n')
		}
		dataID, group := it.DataID, it.Group
		field("appName", it.AppName)
		field("dataId", &dataID)
		field("desc", it.Desc)
		field("group", &group)
		field("type", it.Type)
	}
	return b.String()
}

var yamlImplicit = regexp.MustCompile(`^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0[0-7_]+|[-+]?0x[0-9a-fA-F_]+|[-+]?0b[01_]+|[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+][0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*|<<|=)$`)

// yamlScalar writes a string as SnakeYAML's default dumper would: plain when
// safe, single-quoted when it would read back as another type or starts with
// an indicator, double-quoted when it holds special characters.
func yamlScalar(s string) string {
	if s == "" {
		return "''"
	}
	for _, r := range s {
		if r < 0x20 && r != '\t' || r == 0x7F || r == 0x85 || r == 0xFEFF || r == 0x2028 || r == 0x2029 {
			return strconv.Quote(s)
		}
	}
	needQuote := yamlImplicit.MatchString(s) ||
		strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@` \t") ||
		strings.HasSuffix(s, " ") || strings.HasSuffix(s, "\t") || strings.HasSuffix(s, ":") ||
		strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.Contains(s, "\t")
	if !needQuote {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// ImportItem is one config read from an import archive.
type ImportItem struct {
	Group, DataID, Content string
	AppName, Desc, Type    *string
}

// ImportArchive is the parsed archive.
type ImportArchive struct {
	Items []ImportItem
	// Unrecognized holds the itemName values of entries that are not
	// configs (and, in v2, metadata items without an entry).
	Unrecognized []string
}

// ImportError is a failed parse: the ResultCodeEnum code to answer with
// (ResultMetadataIllegal or ResultParsingDataFailed).
type ImportError struct{ Code int }

// Error implements error.
func (e *ImportError) Error() string { return "compat: import: " + ResultCodeMessage(e.Code) }

// ImportMaxUnzipped bounds the decompressed size of an import archive (its
// file is at most 1 MiB, Spring's max-file-size: text configs a legitimate
// archive holds compress far less than a 32:1 bomb).
const ImportMaxUnzipped = 32 << 20

// ReadImportZip parses an uploaded archive as ConfigController
// .importAndPublishConfig does. A corrupt zip is ResultParsingDataFailed;
// bad metadata is ResultMetadataIllegal.
func ReadImportZip(data []byte) (ImportArchive, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return ImportArchive{}, &ImportError{Code: ResultParsingDataFailed}
	}
	type entry struct{ name, content string }
	var (
		entries  []entry
		meta     *entry
		total    int64
		metaName string
	)
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.HasSuffix(f.Name, "/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return ImportArchive{}, &ImportError{Code: ResultParsingDataFailed}
		}
		b, err := io.ReadAll(io.LimitReader(rc, ImportMaxUnzipped-total+1))
		_ = rc.Close()
		if err != nil {
			return ImportArchive{}, &ImportError{Code: ResultParsingDataFailed}
		}
		total += int64(len(b))
		if total > ImportMaxUnzipped {
			return ImportArchive{}, &ImportError{Code: ResultParsingDataFailed}
		}
		e := entry{name: f.Name, content: strings.ToValidUTF8(string(b), "\uFFFD")}
		if meta == nil && (f.Name == ExportMetaV1 || f.Name == ExportMetaV2) {
			meta = &e
			metaName = f.Name
			continue
		}
		entries = append(entries, e)
	}
	var out ImportArchive
	if meta != nil && metaName == ExportMetaV2 {
		items, err := parseMetadataV2(meta.content)
		if err != nil {
			return ImportArchive{}, err
		}
		found := make(map[string]bool, len(entries))
		byName := make(map[string]int, len(items))
		for i, m := range items {
			byName[*m.Group+"/"+*m.DataID] = i
		}
		contents := make(map[string]string, len(entries))
		for _, e := range entries {
			if _, ok := byName[e.name]; !ok {
				out.Unrecognized = append(out.Unrecognized, "未在元数据中找到: "+e.name)
				continue
			}
			contents[e.name] = e.content
			found[e.name] = true
		}
		for _, m := range items {
			name := *m.Group + "/" + *m.DataID
			if !found[name] {
				out.Unrecognized = append(out.Unrecognized, "未在文件中找到: "+name)
				continue
			}
			out.Items = append(out.Items, ImportItem{Group: *m.Group, DataID: *m.DataID, Content: contents[name],
				AppName: m.AppName, Desc: m.Desc, Type: m.Type})
		}
		return out, nil
	}
	apps := map[string]string{}
	if meta != nil {
		text := regexp.MustCompile(`[\r\n]+`).ReplaceAllString(meta.content, "|")
		for _, piece := range JavaSplit(text, "|") {
			kv := JavaSplit(piece, "=")
			if len(kv) != 2 {
				return ImportArchive{}, &ImportError{Code: ResultMetadataIllegal}
			}
			apps[kv[0]] = kv[1]
		}
	}
	for _, e := range entries {
		parts := JavaSplit(e.name, "/")
		if len(parts) != 2 {
			out.Unrecognized = append(out.Unrecognized, e.name)
			continue
		}
		it := ImportItem{Group: parts[0], DataID: parts[1], Content: e.content}
		if a, ok := apps[metaV1Key(parts[0], parts[1])]; ok {
			it.AppName = &a
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}

type metadataItem struct {
	AppName *string `yaml:"appName"`
	DataID  *string `yaml:"dataId"`
	Desc    *string `yaml:"desc"`
	Group   *string `yaml:"group"`
	Type    *string `yaml:"type"`
}

// parseMetadataV2 reads .metadata.yml: a non-empty metadata list whose items
// all have non-blank dataId, group and type.
func parseMetadataV2(text string) (items []metadataItem, err error) {
	defer func() {
		if r := recover(); r != nil { // yaml.v3 panics on some hostile inputs
			items, err = nil, &ImportError{Code: ResultMetadataIllegal}
		}
	}()
	var doc struct {
		Metadata []metadataItem `yaml:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil || len(doc.Metadata) == 0 {
		return nil, &ImportError{Code: ResultMetadataIllegal}
	}
	for _, m := range doc.Metadata {
		if m.DataID == nil || m.Group == nil || m.Type == nil || JavaIsBlank(*m.DataID) || JavaIsBlank(*m.Group) || JavaIsBlank(*m.Type) {
			return nil, &ImportError{Code: ResultMetadataIllegal}
		}
	}
	return doc.Metadata, nil
}
