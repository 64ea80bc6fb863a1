package reference

import (
	"math"
	"strconv"

	"github.com/fakekafka/fakekafka/configs"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// More admin argument cases (corpus_admin2_test.go): config alterations
// beyond SET, repeated ids, empty group ids, the oldest versions' forms.
func admin2MoreCases(versions map[int16][2]int16) []corpusCase {
	latest := func(k kmsg.Key) int16 { return versions[k.Int16()][1] }
	oldest := func(k kmsg.Key) int16 { return versions[k.Int16()][0] }
	var out []corpusCase
	exact := func(c corpusCase) { c.exactMessages = true; out = append(out, c) }
	iac, ac := latest(kmsg.IncrementalAlterConfigs), latest(kmsg.AlterConfigs)

	incOp := func(typ kmsg.ConfigResourceType, name, key string, value *string, op kmsg.IncrementalAlterConfigOp) func(*corpusEnv) kmsg.Request {
		return func(*corpusEnv) kmsg.Request {
			req := at(iac, kmsg.NewPtrIncrementalAlterConfigsRequest())
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = typ, name
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Value, c.Op = key, value, op
			rr.Configs = append(rr.Configs, c)
			req.Resources = append(req.Resources, rr)
			req.ValidateOnly = true
			return req
		}
	}
	topic := kmsg.ConfigResourceTypeTopic
	exact(corpusCase{name: "IncrementalAlterConfigs/validate-only-delete-unknown", req: incOp(topic, "corpus", "no.such.config", nil, kmsg.IncrementalAlterConfigOpDelete)})
	exact(corpusCase{name: "IncrementalAlterConfigs/validate-only-subtract-list", req: incOp(topic, "corpus", "cleanup.policy", kmsg.StringPtr("compact"), kmsg.IncrementalAlterConfigOpSubtract)})
	exact(corpusCase{name: "IncrementalAlterConfigs/validate-only-append-bogus", req: incOp(topic, "corpus", "cleanup.policy", kmsg.StringPtr("bogus"), kmsg.IncrementalAlterConfigOpAppend)})
	exact(corpusCase{name: "IncrementalAlterConfigs/validate-only-set-null", req: incOp(topic, "corpus", "retention.ms", nil, kmsg.IncrementalAlterConfigOpSet)})
	exact(corpusCase{name: "IncrementalAlterConfigs/validate-only-unknown-op", req: incOp(topic, "corpus", "retention.ms", kmsg.StringPtr("1"), 7)})
	exact(corpusCase{name: "IncrementalAlterConfigs/validate-only-unknown-topic", req: incOp(topic, "no-such-topic", "retention.ms", kmsg.StringPtr("1"), kmsg.IncrementalAlterConfigOpSet)})
	exact(corpusCase{name: "IncrementalAlterConfigs/validate-only-other-broker", req: incOp(kmsg.ConfigResourceTypeBroker, "2", "log.retention.ms", kmsg.StringPtr("1000"), kmsg.IncrementalAlterConfigOpSet)})
	exact(corpusCase{name: "AlterConfigs/validate-only-broker-segment-bytes", req: func(*corpusEnv) kmsg.Request {
		req := at(ac, kmsg.NewPtrAlterConfigsRequest())
		rr := kmsg.NewAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = "log.segment.bytes", kmsg.StringPtr("1000")
		rr.Configs = append(rr.Configs, c)
		req.Resources = append(req.Resources, rr)
		req.ValidateOnly = true
		return req
	}})
	exact(corpusCase{name: "AlterConfigs/validate-only-null-value", req: func(*corpusEnv) kmsg.Request {
		req := alterConfigsReq(ac, "corpus", "retention.ms", "1")
		req.Resources[0].Configs[0].Value = nil
		req.ValidateOnly = true
		return req
	}})

	exact(corpusCase{name: "DescribeTransactions/same-id-twice", txnID: corpusTxn, req: func(*corpusEnv) kmsg.Request {
		req := at(latest(kmsg.DescribeTransactions), kmsg.NewPtrDescribeTransactionsRequest())
		req.TransactionalIDs = []string{corpusTxn, corpusTxn}
		return req
	}})
	exact(corpusCase{name: "ListTransactions/v0-unknown-state-and-producer", txnID: corpusTxn, req: func(e *corpusEnv) kmsg.Request {
		req := at(oldest(kmsg.ListTransactions), kmsg.NewPtrListTransactionsRequest())
		req.StateFilters, req.ProducerIDFilters = []string{"CompleteCommit", "Nope"}, []int64{e.pid, 424242}
		return req
	}})
	exact(corpusCase{name: "FindCoordinator/v0-empty-key", req: func(*corpusEnv) kmsg.Request {
		return at(oldest(kmsg.FindCoordinator), kmsg.NewPtrFindCoordinatorRequest())
	}})
	if ov := latest(kmsg.OffsetFetch); ov >= 8 {
		exact(corpusCase{name: "OffsetFetch/batched-empty-group", to: func(r *run, _ *corpusEnv) int32 { return r.coordinator("") },
			req: func(*corpusEnv) kmsg.Request {
				req := at(ov, kmsg.NewPtrOffsetFetchRequest())
				g := kmsg.NewOffsetFetchRequestGroup()
				g.Group = ""
				req.Groups = append(req.Groups, g)
				return req
			}})
	}
	ev := latest(kmsg.ElectLeaders)
	exact(corpusCase{name: "ElectLeaders/unclean-unknown-and-duplicates", req: electReq(ev, 1,
		map[string][]int32{"corpus": {1, 1, 9}, "no-such-topic": {0}}, "corpus", "no-such-topic")})
	if o := oldest(kmsg.ElectLeaders); o == 0 {
		exact(corpusCase{name: "ElectLeaders/v0-unknown-partition", req: electReq(0, 0, map[string][]int32{"corpus": {0, 9}}, "corpus")})
	}
	return out
}

// topicConfigCases are, for every topic config Kafka 4.4 describes, the
// values just outside its validator (below a minimum, above a maximum, a
// string outside a set, a non-boolean, a non-number), sent validate-only:
// the catalogue's validators against Kafka's.
func topicConfigCases(cv int16) []corpusCase {
	var out []corpusCase
	add := func(name, value string) {
		out = append(out, corpusCase{name: "CreateTopics/config-" + name + "=" + value, exactMessages: true,
			req: createValidateOnly(cv, "admin2-cfg", map[string]string{name: value})})
	}
	for _, d := range configs.Topic.Described() {
		switch d.Type {
		case configs.Boolean:
			add(d.Name, "maybe")
		case configs.Int, configs.Long, configs.Short:
			add(d.Name, "x")
		case configs.Double:
			add(d.Name, "x")
		}
		v := d.Valid
		if v == nil {
			continue
		}
		switch v.Kind {
		case configs.Range:
			if lo, err := strconv.ParseInt(v.Min, 10, 64); err == nil && lo > math.MinInt64 {
				add(d.Name, strconv.FormatInt(lo-1, 10))
			} else if f, err := strconv.ParseFloat(v.Min, 64); err == nil {
				add(d.Name, strconv.FormatFloat(f-0.5, 'f', -1, 64))
			}
			if hi, err := strconv.ParseInt(v.Max, 10, 64); err == nil && hi < math.MaxInt64 {
				add(d.Name, strconv.FormatInt(hi+1, 10))
			} else if f, err := strconv.ParseFloat(v.Max, 64); err == nil {
				add(d.Name, strconv.FormatFloat(f+0.5, 'f', -1, 64))
			}
		case configs.OneOf, configs.OneOfIgnoreCase, configs.ListOf, configs.Opaque:
			add(d.Name, "bogus")
		}
	}
	return out
}
