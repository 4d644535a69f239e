package compat

import "sort"

// JavaHashCapacity is the table size of a java.util.HashMap/HashSet created
// with the given initial capacity (16 for the default constructor) and grown
// by inserting n entries one by one (load factor 0.75).
func JavaHashCapacity(initial, n int) int {
	c := 1
	for c < initial {
		c *= 2
	}
	for float64(n) > float64(c)*0.75 {
		c *= 2
	}
	return c
}

// JavaHashBucket is the bucket index HashMap uses for a key with hashCode h.
func JavaHashBucket(h int32, capacity int) int {
	u := uint32(h)
	return int((u ^ (u >> 16)) & uint32(capacity-1))
}

// JavaHashOrder returns the indexes of hashes in the iteration order of a
// java.util.HashMap holding keys with those hash codes, inserted in the given
// order: ascending bucket, insertion order within a bucket (Java 8 resizes keep
// that relative order). Treeified buckets (8+ collisions) are not modelled.
func JavaHashOrder(hashes []int32, initialCapacity int) []int {
	capacity := JavaHashCapacity(initialCapacity, len(hashes))
	idx := make([]int, len(hashes))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return JavaHashBucket(hashes[idx[a]], capacity) < JavaHashBucket(hashes[idx[b]], capacity)
	})
	return idx
}

// JavaHashMapKeys returns the keys of m in java.util.HashMap iteration order
// (inserted in ascending order, which only matters for bucket collisions).
func JavaHashMapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return JavaHashOrderStrings(keys, 16)
}

// JavaHashOrderStrings orders string keys as a HashMap<String,?> created with
// initialCapacity (16 by default) and filled by inserting them in the given
// order.
func JavaHashOrderStrings(keys []string, initialCapacity int) []string {
	hashes := make([]int32, len(keys))
	for i, k := range keys {
		hashes[i] = JavaStringHash(k)
	}
	out := make([]string, len(keys))
	for i, j := range JavaHashOrder(hashes, initialCapacity) {
		out[i] = keys[j]
	}
	return out
}
