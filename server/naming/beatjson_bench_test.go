package naming

import "testing"

// The Java client's beat JSON through the fast path.
func BenchmarkParseBeatFast(b *testing.B) {
	raw := `{"cluster":"DEFAULT","ip":"10.0.0.5","metadata":{"preserved.register.source":"SPRING_CLOUD"},"period":5000,"port":8080,"scheduled":false,"serviceName":"DEFAULT_GROUP@@demo","stopped":false,"weight":1.0}`
	var bi BeatInfo
	for b.Loop() {
		bi = BeatInfo{}
		if !parseBeatFast(raw, &bi) {
			b.Fatal("slow")
		}
	}
}
