package distro

import (
	"slices"
	"strconv"

	"github.com/nacosd/nacosd/compat"
)

// order is the order in which a Java node's datum lists a service's
// instances (naming-v1.md §6.4): the values() of the HashMap keyed by datum
// key (ip:port:unknown:cluster) that ServiceManager.updateIpAddresses builds
// for every write. The map is created with the old list's size and filled
// with the old list, in its order, then the written instance; a list
// received from the owner is kept as the owner sent it. The datum JSON a
// nacosd member sends is byte-identical to a Java member's for the same
// history only if it follows the same order (compat/testdata/distro/java148).
//
// The order is a stable sort of the keys by HashMap bucket. Once sorted for
// a capacity (c), refilling a map of that capacity in that order changes
// nothing, so a re-register of a known key costs a lookup and a new key is
// inserted after its bucket's last key; only a change of capacity sorts
// again (with the hashes kept in hashes).
type order struct {
	keys   []string
	hashes []int32 // their Java hash codes (filled when needed)
	c      int     // the HashMap capacity keys are sorted for (0: not known sorted)
}

// put records a write of key.
func (o *order) put(key string) {
	o.fillHashes()
	old := len(o.keys)
	h := compat.JavaStringHash(key)
	known := o.index(key, h) >= 0
	n := old
	if !known {
		n++
	}
	c := compat.JavaHashCapacity(old, n)
	if known {
		if o.c != c {
			o.sort(c)
		}
		return
	}
	if o.c != c {
		o.keys, o.hashes = append(o.keys, key), append(o.hashes, h)
		o.sort(c)
		return
	}
	b := compat.JavaHashBucket(h, c)
	i := len(o.keys)
	for i > 0 && compat.JavaHashBucket(o.hashes[i-1], c) > b {
		i--
	}
	o.keys, o.hashes = slices.Insert(o.keys, i, key), slices.Insert(o.hashes, i, h)
}

// remove records a removal of key (the map is filled, then the key
// removed).
func (o *order) remove(key string) {
	o.fillHashes()
	old := len(o.keys)
	if c := compat.JavaHashCapacity(old, old); o.c != c {
		o.sort(c)
	}
	if i := o.index(key, compat.JavaStringHash(key)); i >= 0 {
		o.keys, o.hashes = slices.Delete(o.keys, i, i+1), slices.Delete(o.hashes, i, i+1)
	}
}

// set replaces the order (a received list keeps the sender's).
func (o *order) set(keys []string) {
	o.keys, o.hashes, o.c = slices.Clone(keys), nil, 0
}

// index is the position of key (whose hash is h), or -1. Once sorted for
// a capacity the order is by bucket, so only key's bucket is searched.
func (o *order) index(key string, h int32) int {
	lo, hi := 0, len(o.hashes)
	if c := o.c; c > 0 {
		b := compat.JavaHashBucket(h, c)
		cmp := func(x int32, b int) int { return compat.JavaHashBucket(x, c) - b }
		lo, _ = slices.BinarySearchFunc(o.hashes, b, cmp)
		hi, _ = slices.BinarySearchFunc(o.hashes[lo:], b+1, cmp)
		hi += lo
	}
	for i := lo; i < hi; i++ {
		if o.hashes[i] == h && o.keys[i] == key {
			return i
		}
	}
	return -1
}

// fillHashes fills hashes after the order was replaced.
func (o *order) fillHashes() {
	if len(o.hashes) == len(o.keys) {
		return
	}
	o.hashes = make([]int32, len(o.keys))
	for i, k := range o.keys {
		o.hashes[i] = compat.JavaStringHash(k)
	}
}

// sort orders the keys as a HashMap of capacity c filled in their current
// order iterates them (compat.JavaHashOrder).
func (o *order) sort(c int) {
	idx := compat.JavaHashOrder(o.hashes, c)
	keys, hashes := make([]string, len(idx)), make([]int32, len(idx))
	for i, j := range idx {
		keys[i], hashes[i] = o.keys[j], o.hashes[j]
	}
	o.keys, o.hashes, o.c = keys, hashes, c
}

// DatumKey is an instance's key in its datum's HashMap (Instance.getDatumKey:
// ip:port:unknown:cluster, without the port when it is not positive).
func DatumKey(in compat.DistroInstance) string {
	if in.Port > 0 {
		return in.IP + ":" + strconv.Itoa(in.Port) + ":unknown:" + in.ClusterName
	}
	return in.IP + ":unknown:" + in.ClusterName
}
