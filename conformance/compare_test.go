package conformance

import "testing"

// TestCompareExtends: "extends" lets nacosd add keys to Java's object but
// still compares every key Java sends.
func TestCompareExtends(t *testing.T) {
	t.Parallel()
	java := CorpusResponse{Status: 200, ContentType: "application/json", Body: `{"version":"1.4.8","standalone_mode":"standalone","function_mode":null}`}
	for _, c := range []struct {
		body string
		same bool
	}{
		{`{"version":"1.4.8","standalone_mode":"standalone","function_mode":null,"nacosd_version":"v1"}`, true},
		{`{"function_mode":null,"version":"1.4.8","standalone_mode":"standalone"}`, true},
		{`{"version":"1.4.9","standalone_mode":"standalone","function_mode":null,"nacosd_version":"v1"}`, false},
		{`{"version":"1.4.8","function_mode":null,"nacosd_version":"v1"}`, false},
	} {
		n := CorpusResponse{Status: 200, ContentType: "application/json", Body: c.body}
		if diff := compareResponses("extends", java, n); (diff == "") != c.same {
			t.Errorf("%s: diff %q, want same=%v", c.body, diff, c.same)
		}
		if c.body != java.Body && compareResponses("all", java, n) == "" {
			t.Errorf("%s: all found no difference", c.body)
		}
	}
}

// TestServerStateComparedAsExtension: the corpus compares
// /v1/console/server/state so (nacosd adds its build to Java's keys).
func TestServerStateComparedAsExtension(t *testing.T) {
	t.Parallel()
	reqs, err := LoadCorpus("corpus")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if r.Name == "console.state" {
			if r.Compare != "extends" {
				t.Errorf("console.state compares %q", r.Compare)
			}
			return
		}
	}
	t.Error("no console.state in the corpus")
}
