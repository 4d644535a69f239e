package push

import (
	"fmt"
	"math"
	"strconv"
	"testing"
)

func TestParseAck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    int64
		typ     string
		wantErr bool
	}{
		{in: `{"type": "push-ack", "lastRefTime":"123", "data":""}`, want: 123, typ: "push-ack"},
		{in: `{"data":"","lastRefTime":"456","type":"push-ack"}`, want: 456, typ: "push-ack"},
		{in: `{"type":"dump-ack","lastRefTime":789,"data":"{\"a\":1}"}`, want: 789, typ: "dump-ack"},
		{in: "  \n{\"lastRefTime\":\" 12 \"}\x00\x00\x00", want: 12},
		{in: `{"lastRefTime":"+12"}`, want: 12},
		{in: `{"lastRefTime":"-12"}`, want: -12},
		{in: `{"lastRefTime":1.9}`, want: 1},
		{in: `{"lastRefTime":-1.9}`, want: -1},
		{in: `{"lastRefTime":1e3}`, want: 1000},
		{in: `{"lastRefTime":9223372036854775807}`, want: math.MaxInt64},
		{in: `{"lastRefTime":9.223372036854775807E18}`, want: math.MaxInt64},
		{in: `{"lastRefTime":null}`, want: 0},
		{in: `{"lastRefTime":""}`, want: 0},
		{in: `{"lastRefTime":"null"}`, want: 0},
		{in: `{}`, want: 0},
		{in: `{"LASTREFTIME":5}`, want: 0}, // Jackson is case-sensitive
		{in: `{"lastRefTime":1,"lastRefTime":2}`, want: 2},
		{in: `{"lastRefTime":3} trailing garbage`, want: 3},
		{in: `{"type":5,"data":true,"lastRefTime":"4","x":[{}]}`, want: 4, typ: "5"},
		{in: `{"type":null,"lastRefTime":"4"}`, want: 4},
		{in: `{"lastRefTime":9223372036854775808}`, wantErr: true},
		{in: `{"lastRefTime":1e19}`, wantErr: true},
		{in: `{"lastRefTime":"9223372036854775808"}`, wantErr: true},
		{in: `{"lastRefTime":"1.0"}`, wantErr: true},
		{in: `{"lastRefTime":"1e3"}`, wantErr: true},
		{in: `{"lastRefTime":"abc"}`, wantErr: true},
		{in: `{"lastRefTime":true}`, wantErr: true},
		{in: `{"lastRefTime":[1]}`, wantErr: true},
		{in: `{"lastRefTime":{}}`, wantErr: true},
		{in: `{"type":{},"lastRefTime":1}`, wantErr: true},
		{in: `{"data":[],"lastRefTime":1}`, wantErr: true},
		{in: `null`, wantErr: true},
		{in: `[]`, wantErr: true},
		{in: `"x"`, wantErr: true},
		{in: ``, wantErr: true},
		{in: `{"lastRefTime":1`, wantErr: true},
		{in: `{'lastRefTime':1}`, wantErr: true},
	}
	for _, tc := range cases {
		a, err := parseAck([]byte(tc.in))
		if tc.wantErr {
			if err == nil {
				t.Errorf("parseAck(%q) = %+v, want error", tc.in, a)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseAck(%q): %v", tc.in, err)
			continue
		}
		if a.LastRefTime != tc.want || a.Type != tc.typ {
			t.Errorf("parseAck(%q) = %+v, want lastRefTime %d type %q", tc.in, a, tc.want, tc.typ)
		}
	}
}

// FuzzParseAck checks that no datagram panics the ack reader and that the
// value of any accepted ack survives being echoed in both forms clients use.
func FuzzParseAck(f *testing.F) {
	for _, s := range []string{
		`{"type": "push-ack", "lastRefTime":"123", "data":""}`,
		`{"data":"","lastRefTime":"456","type":"push-ack"}`,
		`{"lastRefTime":1.5e3}`,
		`{"lastRefTime":null}`,
		"\x1f\x8b\x08\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := parseAck(b)
		if err != nil {
			return
		}
		for _, echo := range []string{
			fmt.Sprintf(`{"type":"push-ack","lastRefTime":"%d","data":""}`, a.LastRefTime),
			`{"lastRefTime":` + strconv.FormatInt(a.LastRefTime, 10) + `}`,
		} {
			b2, err := parseAck([]byte(echo))
			if err != nil || b2.LastRefTime != a.LastRefTime {
				t.Fatalf("echo %s of %q: %+v, %v", echo, b, b2, err)
			}
		}
	})
}
