package raftstore

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// How dropMappedPages gives pages back.
const (
	// pageOut (MADV_PAGEOUT) reclaims pages; safe on any memory (it never
	// discards data: anonymous pages are swapped out or left alone), so
	// for raft.db, which bolt may remap at any time (raft's writes grow
	// it): the range read from /proc/self/maps may be something else by
	// the time it is advised.
	pageOut = unix.MADV_PAGEOUT
	// dropNow (MADV_DONTNEED) unmaps pages at once, keeping them in the
	// page cache; only while the mapping cannot change (fsm.db under its
	// write lock).
	dropNow = unix.MADV_DONTNEED
)

// dropMappedPages gives back the resident pages of this process's shared
// read-only mappings of path (bolt's). Without it every page bolt ever read
// through its mapping (raft.db: a replay, a compaction's DeleteRange, a
// follower's catch-up; fsm.db: every write and scan) would count in the
// process's RSS.
func dropMappedPages(path string, advice int) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[5] != abs || fs[1] != "r--s" {
			continue
		}
		lo, hi, ok := strings.Cut(fs[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		mem := unsafe.Slice((*byte)(unsafe.Add(nil, uintptr(start))), int(end-start))
		_ = unix.Madvise(mem, advice)
	}
}
