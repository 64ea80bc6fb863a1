package reference

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// How the corpus compares two answers: normalised to JSON-shaped data with
// what must differ between two clusters blanked and hash-built lists
// sorted, then diffed field by field.

// normalise turns a response into JSON-shaped data with what must differ
// between two clusters blanked: throttle times, hosts and ports, cluster,
// topic, member and producer ids, the controller id (a KRaft controller is
// not a broker; Metadata names any broker) and FindCoordinator's node id
// (Kafka's controller places __consumer_offsets itself). Config lists are
// sorted by name.
func normalise(resp kmsg.Response) any {
	if resp == nil {
		return nil
	}
	raw, err := json.Marshal(resp)
	if err != nil {
		panic(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		panic(err)
	}
	if _, ok := resp.(*kmsg.FindCoordinatorResponse); ok {
		// Which broker coordinates a group follows who leads its
		// __consumer_offsets partition, which Kafka's controller places.
		blanked := func(m map[string]any) { m["NodeID"] = "<coordinator>" }
		m := doc.(map[string]any)
		blanked(m)
		if cs, ok := m["Coordinators"].([]any); ok {
			for _, c := range cs {
				blanked(c.(map[string]any))
			}
		}
	}
	if _, ok := resp.(*kmsg.ListConfigResourcesResponse); ok {
		// A set of resources: Kafka lists them per type from hash maps.
		m := doc.(map[string]any)
		if list, ok := m["ConfigResources"].([]any); ok {
			sortByKey(list, "Name")
			sortByKey(list, "Type")
		}
	}
	if _, ok := resp.(*kmsg.DescribeProducersResponse); ok {
		// A partition's producers come from a hash map keyed by producer
		// id, which each cluster picks: order them by what they did.
		for _, t := range listOf(doc.(map[string]any)["Topics"]) {
			for _, p := range listOf(t.(map[string]any)["Partitions"]) {
				list := listOf(p.(map[string]any)["ActiveProducers"])
				sortByKey(list, "LastSequence")
				sortByKey(list, "ProducerEpoch")
			}
		}
	}
	return blank(doc)
}

// listOf is v as a JSON list, or nil.
func listOf(v any) []any { l, _ := v.([]any); return l }

// unplace makes replica placement unobservable: replica, ISR and offline
// lists sorted, leaders blanked.
func unplace(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			switch k {
			case "Replicas", "ISR", "OfflineReplicas":
				if list, ok := val.([]any); ok {
					sort.Slice(list, func(i, j int) bool { return list[i].(float64) < list[j].(float64) })
				}
			case "Leader", "LeaderID":
				x[k] = "<placed>"
			default:
				x[k] = unplace(val)
			}
		}
	case []any:
		for i := range x {
			x[i] = unplace(x[i])
		}
	}
	return v
}

var blanked = map[string]bool{
	"ThrottleMillis": true, "Host": true, "Port": true, "ClusterID": true, "ControllerID": true,
	"TopicID": true, "MemberID": true, "ProducerID": true, "UnknownTags": true,
	"StartTimestamp": true, "LastTimestamp": true,
	"Dir": true, // DescribeLogDirs' path on the broker's disk
}

func blank(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if _, member := val.(string); k == "LeaderID" && member {
				x[k] = "<set>" // JoinGroup's leader is a member id
				continue
			}
			if k == "Configs" {
				sortByName(val)
			}
			if blanked[k] {
				if val != nil && !reflect.ValueOf(val).IsZero() {
					x[k] = "<set>"
				}
				continue
			}
			x[k] = blank(val)
		}
		// kmsg's Version field is the request's: equal by construction.
		delete(x, "Version")
	case []any:
		for i := range x {
			x[i] = blank(x[i])
		}
		sortByKey(x, "Partition")
		sortByKey(x, "Topic")
		sortByKey(x, "User")   // SCRAM results: from a hash map
		sortByKey(x, "Entity") // quota entries: from a hash map
	}
	return v
}

// sortByKey orders a list of objects that all carry key (a partition
// number, a topic or user name, a quota entity) by it: Kafka builds some
// per-partition and per-topic answers (AddPartitionsToTxn,
// DescribeTransactions), SCRAM and quota answers from hash sets, so their
// order means nothing.
func sortByKey(list []any, key string) {
	for _, e := range list {
		if m, ok := e.(map[string]any); !ok || m[key] == nil {
			return
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		return fmt.Sprint(list[i].(map[string]any)[key]) < fmt.Sprint(list[j].(map[string]any)[key])
	})
}

// sortByName orders a config list by name: the order of DescribeConfigs'
// and CreateTopics' config lists is not part of their meaning.
func sortByName(v any) {
	list, ok := v.([]any)
	if !ok {
		return
	}
	name := func(e any) string {
		m, _ := e.(map[string]any)
		s, _ := m["Name"].(string)
		return s
	}
	sort.SliceStable(list, func(i, j int) bool { return name(list[i]) < name(list[j]) })
}

type difference struct{ path, a, b string }

// nullVersusEmpty is a null message on one side and "" on the other: not
// a wording the free-text allowance covers, as a client sees a message
// where there was none.
func nullVersusEmpty(d difference) bool {
	return (d.a == "null" && d.b == `""`) || (d.a == `""` && d.b == "null")
}

// diff lists the paths (Topics/0/ErrorCode) where a and b differ.
func diff(path string, a, b any) []difference {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "/" + k
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		var keys []string
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var out []difference
		for _, k := range keys {
			out = append(out, diff(join(k), x[k], y[k])...)
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			break
		}
		var out []difference
		for i := range x {
			out = append(out, diff(join(fmt.Sprint(i)), x[i], y[i])...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return []difference{{path, short(a), short(b)}}
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 300 && os.Getenv("CORPUS_FULL") == "" {
		return string(b[:300]) + "…"
	}
	return string(b)
}
