package raftstore

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// lockName is the lock file of a store's directory: an exclusive lock on
// it is held while the store is open, and it holds the holder's pid.
const lockName = "lock"

// LockedError is Open's answer when another store (another process, or
// this one) has the directory open.
type LockedError struct {
	Dir     string
	PID     int    // the holder's pid as it wrote it; 0 when unknown
	Command string // its command name when this process can see it
}

func (e *LockedError) Error() string {
	var who string
	switch {
	case e.PID == os.Getpid():
		return fmt.Sprintf("raftstore: %s is already open in this process", e.Dir)
	case e.PID > 0 && e.Command != "":
		who = fmt.Sprintf("another process (pid %d, %s)", e.PID, e.Command)
	case e.PID > 0:
		who = fmt.Sprintf("another process (pid %d, not visible here: in another container or on another machine?)", e.PID)
	default:
		who = "another process"
	}
	return fmt.Sprintf("raftstore: %s holds %s: a data directory serves one nacosd at a time; stop that one, or give this one another data directory (-data-dir)", who, e.Dir)
}

// lockedBy reads the holder's pid from the lock file's content and its
// command name from /proc where there is one.
func lockedBy(dir string, content []byte) *LockedError {
	e := &LockedError{Dir: dir}
	pid, err := strconv.Atoi(strings.TrimSpace(string(content)))
	if err != nil || pid <= 0 {
		return e
	}
	e.PID = pid
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
		e.Command = strings.TrimSpace(string(b))
	}
	return e
}
