package server

// The order of a batched group answer (DescribeGroups, ConsumerGroupDescribe
// with many groups). Kafka 4.4's group coordinator service sorts the groups
// into a java.util.HashMap keyed by their __consumer_offsets partition
// (TopicPartition), asks each partition's shard in the map's iteration
// order and concatenates the answers; ids it refuses before routing (an
// empty id in ConsumerGroupDescribe) come first. So the answer lists the
// groups by the bucket of their partition, in request order within one
// partition; compat/reference's */batched-across-coordinators cases pin it.

import (
	"github.com/fakekafka/fakekafka/coordinator"
)

// groupsInKafkaOrder returns idx, indexes into groups, in the order Kafka
// answers those groups: the ones refused before routing first.
func (c *Cluster) groupsInKafkaOrder(groups []string, idx []int, refused func(string) bool) []int {
	ss, err := c.coord.Shards()
	n := len(ss)
	out := make([]int, 0, len(idx))
	for _, i := range idx {
		if refused(groups[i]) {
			out = append(out, i)
		}
	}
	if err != nil || n == 0 {
		for _, i := range idx {
			if !refused(groups[i]) {
				out = append(out, i)
			}
		}
		return out
	}
	// Partitions in first-seen order, each with its groups.
	var parts []int32
	byPart := map[int32][]int{}
	for _, i := range idx {
		g := groups[i]
		if refused(g) {
			continue
		}
		p := int32(coordinator.Partition(g, n))
		if _, ok := byPart[p]; !ok {
			parts = append(parts, p)
		}
		byPart[p] = append(byPart[p], i)
	}
	for _, p := range javaTopicPartitionOrder(offsetsTopic, parts) {
		out = append(out, byPart[p]...)
	}
	return out
}

// javaTopicPartitionOrder is the iteration order of a default HashMap
// filled with the partitions of topic in the given order by computeIfAbsent
// (as Kafka fills it): TopicPartition.hashCode is
// 31*(31+partition)+topic.hashCode(), spread as HashMap.hash does;
// computeIfAbsent puts a new key at the head of its bin and grows the table
// before inserting into one more than 3/4 full, a growth keeping each
// bin's order.
func javaTopicPartitionOrder(topic string, parts []int32) []int32 {
	th := coordinator.JavaHash(topic)
	hash := func(p int32) uint32 {
		h := uint32(31*(31+p) + th)
		return h ^ h>>16
	}
	table := make([][]int32, 16)
	size := 0
	for _, p := range parts {
		if float64(size) > 0.75*float64(len(table)) {
			grown := make([][]int32, 2*len(table))
			for _, bin := range table {
				for _, q := range bin {
					i := hash(q) & uint32(len(grown)-1)
					grown[i] = append(grown[i], q)
				}
			}
			table = grown
		}
		i := hash(p) & uint32(len(table)-1)
		table[i] = append([]int32{p}, table[i]...)
		size++
	}
	out := make([]int32, 0, len(parts))
	for _, bin := range table {
		out = append(out, bin...)
	}
	return out
}
