package conformance

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestMavenFresh(t *testing.T) {
	dir := t.TempDir()
	build := filepath.Join(dir, "target", "v1")
	write := func(p, s string, at time.Time) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, at, at)
	}
	old, built := time.Now().Add(-time.Hour), time.Now().Add(-time.Minute)
	jar := filepath.Join(dir, "lib.jar")
	write(filepath.Join(dir, "pom.xml"), "<project/>", old)
	write(filepath.Join(dir, "src", "main", "java", "A.java"), "class A {}", old)
	write(jar, "jar", old)
	if mavenFresh(dir, build) {
		t.Fatal("fresh without a build")
	}
	os.MkdirAll(filepath.Join(build, "classes"), 0o755)
	write(filepath.Join(build, "classpath.txt"), jar+"\n", built)
	if !mavenFresh(dir, build) {
		t.Fatal("not fresh after a build")
	}
	write(filepath.Join(dir, "src", "main", "java", "B.java"), "class B {}", time.Now())
	if mavenFresh(dir, build) {
		t.Fatal("fresh after a source changed")
	}
	write(filepath.Join(build, "classpath.txt"), jar+string(os.PathListSeparator)+filepath.Join(dir, "gone.jar"), time.Now().Add(time.Minute))
	if mavenFresh(dir, build) {
		t.Fatal("fresh with a jar of the classpath missing")
	}
}
