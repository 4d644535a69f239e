package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// layer is a property source; lower values win (Spring Boot's order:
// command line, Java system properties, OS environment, config files).
type layer int

const (
	layerFlag    layer = iota // nacosd flags and Spring's --key=value arguments
	layerSysProp              // -Dkey=value
	layerScript               // what the image's docker-startup.sh turns into -D options
	layerEnv                  // OS environment under Spring's relaxed names, NACOSD_* names
	layerFile                 // conf/application.properties and spring.config.additional-location
	layerImage                // the image's conf placeholders, for when that conf is not there
	layerCount
)

// value is a raw property value and where it came from ("-Dserver.port",
// "env SERVER_PORT", "/home/nacos/conf/application.properties:5", …).
type value struct {
	raw  string
	from string
	name string // the property name as written (the layers key it canonical)
}

// sources holds every layer keyed by canonical property name, and the
// process environment.
type sources struct {
	layers [layerCount]map[string]value
	getenv func(string) (string, bool)
	// envAliases are extra environment names of a property (NACOSD_PORT for
	// server.port), looked up in layerEnv after Spring's relaxed names.
	envAliases map[string][]string
	// read records the canonical names looked up (tests check that the
	// properties unknown.go lists cover them)
	read map[string]bool
}

func newSources(getenv func(string) (string, bool)) *sources {
	s := &sources{getenv: getenv, envAliases: map[string][]string{}, read: map[string]bool{}}
	for i := range s.layers {
		s.layers[i] = map[string]value{}
	}
	return s
}

// canonical is the form under which Spring's binder considers two property
// names equal: lower case, dashes removed (server.servlet.contextPath,
// server.servlet.context-path and SERVER.SERVLET.CONTEXTPATH are one
// property).
func canonical(name string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "")
}

func (s *sources) set(l layer, name, raw, from string) {
	s.layers[l][canonical(name)] = value{raw: raw, from: from, name: strings.TrimSpace(name)}
}

// envNames lists the environment variable names Spring Boot 2.7 maps to
// property name: SystemEnvironmentPropertySource's name, '.'→'_', '-'→'_',
// both, and the upper-case forms; then the binder's form (upper case, dashes
// dropped, '.'→'_', [n]→_n_).
func envNames(name string) []string {
	dot := strings.ReplaceAll(name, ".", "_")
	dash := strings.ReplaceAll(name, "-", "_")
	both := strings.ReplaceAll(dot, "-", "_")
	binder := strings.ToUpper(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(name, "-", ""), ".", "_"), "[", "_"), "]", ""))
	cands := []string{name, dot, dash, both, strings.ToUpper(name), strings.ToUpper(dot), strings.ToUpper(dash), strings.ToUpper(both), binder}
	out := cands[:0]
	seen := map[string]bool{}
	for _, c := range cands {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// raw returns the highest-priority value of name, unresolved.
func (s *sources) raw(name string) (value, layer, bool) {
	key := canonical(name)
	s.read[key] = true
	for l := layer(0); l < layerCount; l++ {
		if l == layerEnv {
			for _, n := range envNames(name) {
				if v, ok := s.getenv(n); ok {
					return value{raw: v, from: "env " + n}, l, true
				}
			}
			for _, n := range s.envAliases[key] {
				if v, ok := s.getenv(n); ok && v != "" {
					return value{raw: v, from: "env " + n}, l, true
				}
			}
			continue
		}
		if v, ok := s.layers[l][key]; ok {
			return v, l, true
		}
	}
	return value{}, 0, false
}

// lookup returns the resolved value of name: placeholders ${key:default}
// are replaced as Spring's PropertySourcesPropertyResolver does.
func (s *sources) lookup(name string) (value, bool, error) {
	v, _, ok := s.raw(name)
	if !ok {
		return value{}, false, nil
	}
	r, err := s.resolve(v.raw, map[string]bool{canonical(name): true})
	if err != nil {
		return value{}, true, fmt.Errorf("property %s (from %s): %w", name, v.from, err)
	}
	v.raw = r
	return v, true, nil
}

// resolve replaces ${name} and ${name:default} in text, nested, failing on
// an unresolvable placeholder without default or a circular reference.
func (s *sources) resolve(text string, visiting map[string]bool) (string, error) {
	if !strings.Contains(text, "${") {
		return text, nil
	}
	var sb strings.Builder
	for i := 0; i < len(text); {
		start := strings.Index(text[i:], "${")
		if start < 0 {
			sb.WriteString(text[i:])
			break
		}
		start += i
		sb.WriteString(text[i:start])
		end := matchingBrace(text, start+2)
		if end < 0 { // unterminated: Spring leaves the text as is
			sb.WriteString(text[start:])
			break
		}
		inner, err := s.resolve(text[start+2:end], visiting)
		if err != nil {
			return "", err
		}
		name, def, hasDef := splitDefault(inner)
		key := canonical(name)
		if visiting[key] {
			return "", fmt.Errorf("circular placeholder reference '%s'", name)
		}
		v, _, ok := s.raw(name)
		switch {
		case ok:
			visiting[key] = true
			r, err := s.resolve(v.raw, visiting)
			delete(visiting, key)
			if err != nil {
				return "", err
			}
			sb.WriteString(r)
		case hasDef:
			r, err := s.resolve(def, visiting)
			if err != nil {
				return "", err
			}
			sb.WriteString(r)
		default:
			return "", fmt.Errorf("could not resolve placeholder '%s' in value \"%s\"", name, text)
		}
		i = end + 1
	}
	return sb.String(), nil
}

// matchingBrace finds the '}' closing a placeholder whose body starts at i.
func matchingBrace(text string, i int) int {
	depth := 0
	for ; i < len(text); i++ {
		switch {
		case strings.HasPrefix(text[i:], "${"):
			depth++
			i++
		case text[i] == '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// splitDefault splits "name:default" at the first ':' (the body is
// already resolved, so nested placeholders are gone).
func splitDefault(s string) (name, def string, ok bool) {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// loadFile reads a properties file into the file layer; a later file
// overrides an earlier one. A missing file is not an error.
func (s *sources) loadFile(path string) (found bool, n int, err error) {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return false, 0, nil
		}
		return false, 0, fmt.Errorf("settings: %w", err)
	}
	defer f.Close()
	entries, err := ParseProperties(f)
	if err != nil {
		return true, 0, fmt.Errorf("settings: %s: %w", path, err)
	}
	for _, e := range entries {
		s.set(layerFile, e.Key, e.Value, fmt.Sprintf("%s:%d", path, e.Line))
	}
	return true, len(entries), nil
}

// configLocations expands spring.config.location /
// spring.config.additional-location values ("file:/x/conf/,optional:y.properties")
// into property file paths.
func configLocations(list string) []string {
	var out []string
	for _, loc := range strings.Split(list, ",") {
		loc = strings.TrimSpace(loc)
		loc = strings.TrimPrefix(loc, "optional:")
		loc = strings.TrimPrefix(loc, "file:")
		if loc == "" || strings.HasPrefix(loc, "classpath:") {
			continue
		}
		if strings.HasSuffix(loc, "/") || isDir(loc) {
			out = append(out, filepath.Join(loc, "application.properties"))
			continue
		}
		out = append(out, loc)
	}
	return out
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
