package fastjson

import "testing"

func TestInt(t *testing.T) {
	for in, want := range map[string]bool{
		"0": true, "-0": true, "9223372036854775807": true, "-9223372036854775808": true,
		"9223372036854775808": false, "-9223372036854775809": false, "1.0": false, "1e2": false, "01": true, // "01": reads 0, the caller sees "1" left
		"-": false, "": false, "x": false,
	} {
		p := Scanner{S: in}
		if _, ok := p.Int(); ok != want {
			t.Errorf("Int(%q) ok=%v, want %v", in, ok, want)
		}
	}
}

func TestArrayAndEnd(t *testing.T) {
	for in, want := range map[string]bool{
		`[]`: true, ` [ "a" , "b" ] `: true, `["a",]`: false, `[,]`: false, `["a" "b"]`: false, `[`: false, `["a"] x`: false,
	} {
		p := Scanner{S: in}
		ok := p.Array(func() bool { _, ok := p.PlainString(); return ok }) && p.End()
		if ok != want {
			t.Errorf("%q: %v, want %v", in, ok, want)
		}
	}
}

func TestPlainStringRefusesEscapesAndBadUTF8(t *testing.T) {
	for in, want := range map[string]bool{`"abc"`: true, `"中文"`: true, `"a\"b"`: false, "\"a\x01\"": false, "\"\xff\"": false, `"open`: false} {
		p := Scanner{S: in}
		if _, ok := p.PlainString(); ok != want {
			t.Errorf("PlainString(%q) ok=%v, want %v", in, ok, want)
		}
	}
}

func TestFields(t *testing.T) {
	names := []string{"a", "bb"}
	for in, want := range map[string]string{
		`{"a":"x","bb":"y"}`: "a=x bb=y ", `{"bb":null,"a":"x"}`: "a=x ", `{"c":1,"d":"z","e":null}`: "",
		`{"a":"x","a":"y"}`: "fail", `{"A":"x"}`: "fail", `{"c":{}}`: "fail", `{"c":[]}`: "fail", `{"a":1}`: "fail",
	} {
		p := Scanner{S: in}
		got := ""
		if !p.Fields(names, func(i int) bool {
			v, ok := p.PlainString()
			got += names[i] + "=" + v + " "
			return ok
		}) {
			got = "fail"
		}
		if got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}
