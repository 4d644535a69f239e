package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
)

// genSecrets is `nacosd gen-secrets`: the properties that turn auth on,
// with a fresh random token secret and server identity, ready to append to
// conf/application.properties (or, with -env, as the nacos/nacos-server
// image's variables). Every member of a cluster needs the same values.
func genSecrets(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("nacosd gen-secrets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := fs.Bool("env", false, "print the docker image's environment variables (NACOS_AUTH_*) instead of properties")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `nacosd gen-secrets: print what turns auth on, with fresh secrets.

  nacosd gen-secrets >> conf/application.properties
  nacosd gen-secrets -env > nacos-auth.env        (docker run --env-file)

Copy the same lines to every member of a cluster (and to Java members in a
mixed cluster): tokens signed on one member are checked on the others, and
members recognise one another by the identity header.

`)
		fs.PrintDefaults()
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fs.SetOutput(stdout)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("gen-secrets: unexpected arguments: %v", fs.Args())
	}
	key := make([]byte, 32) // HS256: jjwt's minimum, what Java's docs ask for
	ident := make([]byte, 24)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("gen-secrets: %w", err)
	}
	if _, err := rand.Read(ident); err != nil {
		return fmt.Errorf("gen-secrets: %w", err)
	}
	secret, identity := base64.StdEncoding.EncodeToString(key), hex.EncodeToString(ident)
	if *env {
		fmt.Fprintf(stdout, "NACOS_AUTH_ENABLE=true\nNACOS_AUTH_TOKEN=%s\nNACOS_AUTH_IDENTITY_KEY=serverIdentity\nNACOS_AUTH_IDENTITY_VALUE=%s\n", secret, identity)
		return nil
	}
	fmt.Fprintf(stdout, `# auth on (nacosd gen-secrets): the same lines on every member of the cluster
nacos.core.auth.enabled=true
# HMAC-SHA256 key of the login tokens: Base64 of 32 random bytes
nacos.core.auth.default.token.secret.key=%s
# the header members send one another
nacos.core.auth.server.identity.key=serverIdentity
nacos.core.auth.server.identity.value=%s
`, secret, identity)
	return nil
}
