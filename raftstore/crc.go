package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"runtime"
	"sync"
)

// Raft's FileSnapshotStore keeps a CRC-64 (ECMA) of every state.bin in its
// meta.json and checks it on Open by reading the file once on one core:
// 0.15 s for the 160 MB of 100 000 configs and 100 000 persistent
// instances, the largest part of a start after the state's decoding. The
// verifier checks the same CRC over pieces of the file at once and
// combines them (zlib's crc32_combine, for 64 bits).

var crc64Table = crc64.MakeTable(crc64.ECMA)

// crcPiece is the least a goroutine checks.
const crcPiece = 8 << 20

// fileCRC64 is the CRC-64 (ECMA, as hash/crc64 and raft) of the file at
// path, as raft stores it (big-endian).
func fileCRC64(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	n := int64(runtime.GOMAXPROCS(0))
	n = max(1, min(n, size/crcPiece))
	crcs := make([]uint64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			from, to := size*i/n, size*(i+1)/n
			crcs[i], errs[i] = crcOf(io.NewSectionReader(f, from, to-from))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	crc := crcs[0]
	for i := int64(1); i < n; i++ {
		crc = crc64Combine(crc, crcs[i], size*(i+1)/n-size*i/n)
	}
	return binary.BigEndian.AppendUint64(nil, crc), nil
}

func crcOf(r io.Reader) (uint64, error) {
	buf := make([]byte, 1<<20)
	var crc uint64
	for {
		k, err := r.Read(buf)
		crc = crc64.Update(crc, crc64Table, buf[:k])
		if err == io.EOF {
			return crc, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read: %w", err)
		}
	}
}

// crc64Combine is the CRC of A then B from A's CRC, B's CRC and B's length.
func crc64Combine(crc1, crc2 uint64, len2 int64) uint64 {
	if len2 <= 0 {
		return crc1
	}
	// odd: the operator for one zero bit; even: two, then squared on
	var even, odd [64]uint64
	odd[0] = crc64.ECMA
	for i, row := 1, uint64(1); i < 64; i, row = i+1, row<<1 {
		odd[i] = row
	}
	gf2Square(&even, &odd) // 2 zero bits
	gf2Square(&odd, &even) // 4 zero bits
	for {                  // apply len2 zero bytes to crc1
		gf2Square(&even, &odd)
		if len2&1 != 0 {
			crc1 = gf2Times(&even, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
		gf2Square(&odd, &even)
		if len2&1 != 0 {
			crc1 = gf2Times(&odd, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
	}
	return crc1 ^ crc2
}

func gf2Times(mat *[64]uint64, vec uint64) uint64 {
	var sum uint64
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2Square(square, mat *[64]uint64) {
	for i := range mat {
		square[i] = gf2Times(mat, mat[i])
	}
}
