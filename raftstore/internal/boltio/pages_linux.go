package boltio

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DropMappedPages unmaps the resident pages of this process's shared
// read-only mappings of path (bolt's) with MADV_DONTNEED; they stay in the
// page cache and fault back in when read. Without it every page bolt ever
// read through its mapping (raft.db: every commit's path to the newest
// leaf, a replay, a compaction's DeleteRange, a follower's catch-up;
// fsm.db: every write and scan) would count in the process's RSS.
//
// The caller must hold the lock that serialises the file's write
// transactions, the only thing that remaps it: the range read from
// /proc/self/maps is then the live mapping (advising a range bolt had
// unmapped could zero memory reused by the heap).
func DropMappedPages(path string) {
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
		_ = unix.Madvise(mem, unix.MADV_DONTNEED)
	}
}
