package raftstore

import (
	"encoding/binary"
	"hash/crc64"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func TestCRC64Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	whole := crc64.Checksum(data, crc64Table)
	for _, cut := range []int{0, 1, 7, 8, 9, 255, 256, 2500, 4999, 5000} {
		a, b := crc64.Checksum(data[:cut], crc64Table), crc64.Checksum(data[cut:], crc64Table)
		if got := crc64Combine(a, b, int64(len(data)-cut)); got != whole {
			t.Fatalf("cut at %d: %x, want %x", cut, got, whole)
		}
	}
}

// fileCRC64 splits files of several pieces over goroutines: the same CRC
// as one pass, at every size around the piece boundaries.
func TestFileCRC64(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{0, 1, crcPiece - 1, crcPiece, 2*crcPiece + 3, 5*crcPiece + 1} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := fileCRC64(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := binary.BigEndian.AppendUint64(nil, crc64.Checksum(data, crc64Table)); string(got) != string(want) {
			t.Fatalf("size %d: %x, want %x", size, got, want)
		}
	}
}
