package server

import (
	"errors"
	"fmt"
	"syscall"
)

// portTaken explains a listen that failed because the address is taken
// (what the operator sees when another nacosd or a Java Nacos runs on the
// port); other errors pass unchanged.
func portTaken(err error, what, addr, change string) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	return fmt.Errorf("%s is taken: another process listens on %s (another nacosd, or a Java Nacos?); stop it, or %s: %w",
		what, addr, change, err)
}
