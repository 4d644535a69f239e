package conformance

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// mavenFresh reports whether the Maven project in dir was already packaged
// into buildDir after its last change: buildDir/classpath.txt is newer than
// pom.xml and every file under src/, and every jar it names exists. Then the
// suite skips `mvn package` (conformance/ci.sh has just run it; a Maven
// start costs seconds of CPU per project and client version).
func mavenFresh(dir, buildDir string) bool {
	cpFile := filepath.Join(buildDir, "classpath.txt")
	st, err := os.Stat(cpFile)
	if err != nil {
		return false
	}
	built := st.ModTime()
	newer := func(p string) bool {
		s, err := os.Stat(p)
		return err != nil || !s.ModTime().Before(built)
	}
	if newer(filepath.Join(dir, "pom.xml")) || !exists(filepath.Join(buildDir, "classes")) {
		return false
	}
	stale := false
	filepath.WalkDir(filepath.Join(dir, "src"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || stale {
			stale = true
			return filepath.SkipAll
		}
		if !d.IsDir() && newer(p) {
			stale = true
			return filepath.SkipAll
		}
		return nil
	})
	if stale {
		return false
	}
	b, err := os.ReadFile(cpFile)
	if err != nil {
		return false
	}
	for _, jar := range strings.Split(strings.TrimSpace(string(b)), string(os.PathListSeparator)) {
		if jar != "" && !exists(jar) {
			return false
		}
	}
	return true
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
