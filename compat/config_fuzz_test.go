package compat

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzListeningConfigs checks the Listening-Configs parser on arbitrary
// input: no panic, only ErrInvalidProbe as error, at most 10000 entries, and
// every entry re-encodes to a probe that parses back to itself.
func FuzzListeningConfigs(f *testing.F) {
	for _, s := range []string{"a\x02G\x02m\x01", "a\x02G\x02m\x02ns\x01b\x02G\x02\x01", "a\x02G\x01", "%02%01", "\x02\x02\x02\x01", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dec, err := JavaURLDecode(s)
		if err != nil {
			return
		}
		entries, err := ParseListeningConfigs(dec)
		if err != nil {
			if err != ErrInvalidProbe {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if len(entries) > ConfigMaxListenEntries {
			t.Fatalf("%d entries", len(entries))
		}
		for _, e := range entries {
			probe := e.DataID + "\x02" + e.Group + "\x02" + e.MD5
			if e.Tenant != "" {
				probe += "\x02" + e.Tenant
			}
			again, err := ParseListeningConfigs(probe + "\x01")
			if err != nil || len(again) != 1 || again[0] != e {
				t.Fatalf("entry %+v re-parsed as %+v, %v", e, again, err)
			}
			_ = EncodeChangedKeys([]ChangedKey{{e.DataID, e.Group, e.Tenant}})
		}
	})
}

// FuzzReadImportZip feeds arbitrary bytes to the import reader: it must
// answer with items or an ImportError, never panic.
func FuzzReadImportZip(f *testing.F) {
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
	f.Add(mk("G/a", "x", ".meta.yml", "G.a.app=x\r\n"))
	f.Add(mk("G/a", "x", ".metadata.yml", "metadata:\n- dataId: a\n  group: G\n  type: text\n"))
	f.Add(mk(".metadata.yml", "metadata: [&a [*a]]"))
	f.Add([]byte("PK\x03\x04junk"))
	f.Fuzz(func(t *testing.T, b []byte) {
		arc, err := ReadImportZip(b)
		if err != nil {
			var ie *ImportError
			if !errors.As(err, &ie) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		for _, it := range arc.Items {
			if it.Group == "" && it.DataID == "" && it.Content == "" {
				continue
			}
		}
	})
}
