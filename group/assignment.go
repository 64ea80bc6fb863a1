package group

import "slices"

// Assignment is a set of partitions by topic id, each list sorted.
type Assignment map[[16]byte][]int32

// Clone is a deep copy.
func (a Assignment) Clone() Assignment {
	out := make(Assignment, len(a))
	for id, ps := range a {
		out[id] = slices.Clone(ps)
	}
	return out
}

// Has says whether a holds partition p of topic id.
func (a Assignment) Has(id [16]byte, p int32) bool {
	_, ok := slices.BinarySearch(a[id], p)
	return ok
}

// Equal says whether a and b hold the same partitions.
func (a Assignment) Equal(b Assignment) bool {
	if len(a) != len(b) {
		return false
	}
	for id, ps := range a {
		if !slices.Equal(ps, b[id]) {
			return false
		}
	}
	return true
}

// Filter keeps the partitions keep accepts.
func (a Assignment) Filter(keep func(id [16]byte, p int32) bool) Assignment {
	out := Assignment{}
	for id, ps := range a {
		for _, p := range ps {
			if keep(id, p) {
				out[id] = append(out[id], p)
			}
		}
	}
	return out
}

// Add adds partition p of topic id, keeping the list sorted.
func (a Assignment) Add(id [16]byte, p int32) {
	ps := a[id]
	if i, ok := slices.BinarySearch(ps, p); !ok {
		a[id] = slices.Insert(ps, i, p)
	}
}

// TopicIDs are a's topics in id order.
func (a Assignment) TopicIDs() [][16]byte {
	ids := make([][16]byte, 0, len(a))
	for id := range a {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(x, y [16]byte) int { return slices.Compare(x[:], y[:]) })
	return ids
}
