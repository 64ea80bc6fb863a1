package reference

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Scenarios driven by a real client (franz-go) where a client's retries
// are the point, and the configuration scenario.
func init() {
	scenarios = append(scenarios,
		scenario{
			name: "controlled-shutdown",
			rows: []string{"controlled shutdown (SIGTERM) of the leader, then restart"},
			run: func(r *run) []string {
				r.create("ctl", nil)
				a := r.produce("ctl", acksAll, vals("a", 0, 5)...)
				r.down[1] = true
				if err := r.tg.Stop(1); err != nil {
					r.Fatal(err)
				}
				p := r.waitLeader("ctl", func(l int32) bool { return l > 1 })
				p = r.waitISR("ctl", 2, 3)
				b := r.produce("ctl", acksAll, vals("b", 0, 5)...)
				r.start(1)
				q := r.waitISR("ctl", 1, 2, 3)
				return []string{fmt.Sprintf("acks=all %v; stopped: %v; acks=all %v; restarted: %v; read %s",
					a, p, b, q, r.readAll(q.leader, "ctl"))}
			},
		},
		scenario{
			name: "rolling-crashes",
			rows: []string{"acks=all, idempotent franz-go producer, min.insync.replicas=2, brokers 1, 2, 3 crashed and restarted in turn"},
			run: func(r *run) []string {
				r.create("roll", map[string]string{"min.insync.replicas": "2"})
				cl := r.client(kgo.DefaultProduceTopic("roll"), kgo.RequiredAcks(kgo.AllISRAcks()),
					kgo.RecordDeliveryTimeout(2*time.Minute), kgo.RecordPartitioner(kgo.ManualPartitioner()))
				var offsets []int64
				var values []string
				n := 0
				send := func() {
					for range 10 {
						v := fmt.Sprintf("a%d", n)
						n++
						res := cl.ProduceSync(r.ctx, &kgo.Record{Value: []byte(v)})
						rec, err := res.First()
						if err != nil {
							r.Fatalf("produce %s: %v", v, err)
						}
						offsets, values = append(offsets, rec.Offset), append(values, v)
					}
				}
				for id := int32(1); id <= 3; id++ {
					send()
					r.crash(id)
					send()
					r.start(id)
					r.waitISR("roll", 1, 2, 3)
				}
				p := r.meta("roll")
				return []string{fmt.Sprintf("acknowledged %s; %v; read %s", spans(offsets, values), p, r.readAll(p.leader, "roll"))}
			},
		},
		scenario{
			name: "idempotent-failover",
			rows: []string{"idempotent producer (raw): a retried batch after the leader crashes, a sequence gap, the next batch"},
			run: func(r *run) []string {
				r.create("idem", nil)
				req := kmsg.NewPtrInitProducerIDRequest()
				req.SetVersion(4)
				req.TransactionTimeoutMillis = 60000
				req.ProducerID, req.ProducerEpoch = -1, -1
				var ip *kmsg.InitProducerIDResponse
				r.waitFor("a producer id", func() bool {
					ip = r.do(1, req).(*kmsg.InitProducerIDResponse)
					return ip.ErrorCode != kerr.CoordinatorLoadInProgress.Code
				})
				pid, ep := ip.ProducerID, ip.ProducerEpoch
				first := r.produceTo(1, "idem", acksAll, batch(r, pid, ep, 0, vals("a", 0, 5)))
				second := batch(r, pid, ep, 5, vals("a", 5, 10))
				s := r.produceTo(1, "idem", acksAll, second)
				r.crash(1)
				p := r.waitLeader("idem", func(l int32) bool { return l == 2 || l == 3 })
				retry := r.produceLeader("idem", acksAll, second)
				gap := r.produceLeader("idem", acksAll, batch(r, pid, ep, 15, vals("x", 0, 5)))
				next := r.produceLeader("idem", acksAll, batch(r, pid, ep, 10, vals("a", 10, 15)))
				old := r.produceLeader("idem", acksAll, batch(r, pid, ep, 0, vals("y", 0, 1)))
				return []string{fmt.Sprintf("InitProducerID %s epoch %d; seq 0 %v, seq 5 %v; leader crashed: %v; seq 5 again %v; seq 15 %v; seq 10 %v; seq 0 again %v; read %s",
					errName(ip.ErrorCode), ep, first, s, p, retry, gap, next, old, r.readAll(p.leader, "idem"))}
			},
		},
		scenario{
			name: "group-coordinator-crash",
			rows: []string{"consumer group (franz-go, classic): consume and commit, the coordinator crashes, consume and commit again"},
			run: func(r *run) []string {
				r.create("grp", nil)
				r.produce("grp", acksAll, vals("a", 0, 10)...)
				coord := r.coordinator("g")
				cl := r.client(kgo.ConsumerGroup("g"), kgo.ConsumeTopics("grp"), kgo.DisableAutoCommit(),
					kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond),
					kgo.HeartbeatInterval(200*time.Millisecond), kgo.SessionTimeout(6*time.Second))
				first := r.consume(cl, 10)
				r.commit(cl)
				before := r.describeGroup(coord, "g")
				r.crash(coord)
				r.produce("grp", acksAll, vals("b", 0, 10)...)
				second := r.consume(cl, 10)
				r.commit(cl)
				moved := r.coordinator("g")
				committed := r.committed(moved, "g", "grp")
				during := r.describeGroup(moved, "g")
				cl.Close()
				after := r.describeGroup(moved, "g")
				return []string{fmt.Sprintf("read %s; committed; %s; coordinator crashed (moved: %v); read %s; committed %s; %s; after Close: %s",
					first, before, moved != coord, second, committed, during, after)}
			},
		},
		scenario{
			name: "unclean-config",
			rows: []string{"leaderless partition, then unclean.leader.election.enable=true on the topic (KIP-704)"},
			run: func(r *run) []string {
				r.create("uncfg", nil)
				r.produce("uncfg", acksAll, vals("a", 0, 5)...)
				r.crash(3)
				r.produce("uncfg", acksAll, vals("b", 0, 5)...)
				r.waitISR("uncfg", 1, 2)
				r.crash(1)
				r.waitLeader("uncfg", func(l int32) bool { return l == 2 })
				r.crash(2)
				r.start(3)
				p := r.waitLeader("uncfg", func(l int32) bool { return l == -1 })
				set := r.alterConfigs("uncfg", [][3]string{{"unclean.leader.election.enable", "0", "true"}})
				// Bounded: "not within 20 s" is an answer too.
				q := p
				elected := r.poll(20*time.Second, func() bool { q = r.meta("uncfg"); return q.leader >= 0 })
				if !elected {
					return []string{fmt.Sprintf("leaderless %v; set: %s; still leaderless 20 s later", p, set)}
				}
				return []string{fmt.Sprintf("leaderless %v; set: %s; elected: %v; acks=1 %v; read %s",
					p, set, q, r.produce("uncfg", acks1, "c0"), r.readAll(q.leader, "uncfg"))}
			},
		},
		scenario{
			name: "topic-configs",
			rows: []string{"topic configs: CreateTopics with configs, DescribeConfigs, IncrementalAlterConfigs (set, delete, bad value, unknown name)"},
			run: func(r *run) []string {
				r.create("cfg", map[string]string{"min.insync.replicas": "2", "retention.ms": "3600000", "cleanup.policy": "compact"})
				keys := []string{"cleanup.policy", "compression.type", "max.message.bytes", "min.insync.replicas",
					"retention.bytes", "retention.ms", "segment.bytes", "unclean.leader.election.enable"}
				created := r.describeConfigs("cfg", keys)
				set := r.alterConfigs("cfg", [][3]string{{"retention.ms", "0", "1234"}, {"min.insync.replicas", "1", ""}})
				// Kafka's brokers learn the change from the metadata log a
				// moment after the controller answers.
				var altered string
				r.waitFor("the altered configs", func() bool {
					altered = r.describeConfigs("cfg", keys)
					return strings.Contains(altered, "retention.ms=1234(")
				})
				bad := r.alterConfigs("cfg", [][3]string{{"min.insync.replicas", "0", "abc"}})
				unknown := r.alterConfigs("cfg", [][3]string{{"no.such.config", "0", "1"}})
				return []string{fmt.Sprintf("created: %s; set retention.ms, delete min.insync.replicas: %s; now: %s; min.insync.replicas=abc: %s; no.such.config: %s",
					created, set, altered, bad, unknown)}
			},
		},
	)
}

// client is a franz-go client on the target with short backoffs, closed at
// the end of the scenario.
func (r *run) client(opts ...kgo.Opt) *kgo.Client {
	r.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(r.tg.Bootstrap()...),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		kgo.MetadataMinAge(100 * time.Millisecond)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		r.Fatal(err)
	}
	r.Cleanup(cl.Close)
	return cl
}

// consume polls cl until n records arrived and spans them.
func (r *run) consume(cl *kgo.Client, n int) string {
	r.Helper()
	var offsets []int64
	var values []string
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	for len(offsets) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			r.Fatalf("consumed %d of %d records", len(offsets), n)
		}
		fs.EachRecord(func(rec *kgo.Record) {
			offsets, values = append(offsets, rec.Offset), append(values, string(rec.Value))
		})
	}
	return spans(offsets, values)
}

// commit commits what cl consumed, retrying while the coordinator moves.
func (r *run) commit(cl *kgo.Client) {
	r.Helper()
	var err error
	r.waitFor("a commit", func() bool {
		ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
		defer cancel()
		err = cl.CommitUncommittedOffsets(ctx)
		return err == nil
	})
}

// coordinator is group's coordinator, waiting for one that is up.
func (r *run) coordinator(group string) int32 {
	r.Helper()
	var id int32
	r.waitFor("a group coordinator", func() bool {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.SetVersion(4)
		req.CoordinatorKeys = []string{group}
		c := r.do(0, req).(*kmsg.FindCoordinatorResponse).Coordinators[0]
		id = c.NodeID
		return c.ErrorCode == 0 && !r.down[id]
	})
	return id
}

func (r *run) committed(coord int32, group, topic string) string {
	r.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.SetVersion(7)
	req.Group = group
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	req.Topics = append(req.Topics, rt)
	resp := r.do(coord, req).(*kmsg.OffsetFetchResponse)
	if resp.ErrorCode != 0 {
		return errName(resp.ErrorCode)
	}
	p := resp.Topics[0].Partitions[0]
	return fmt.Sprintf("%d (%s)", p.Offset, errName(p.ErrorCode))
}

func (r *run) describeGroup(coord int32, group string) string {
	r.Helper()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.SetVersion(5)
	req.Groups = []string{group}
	g := r.do(coord, req).(*kmsg.DescribeGroupsResponse).Groups[0]
	if g.ErrorCode != 0 {
		return "group " + errName(g.ErrorCode)
	}
	return fmt.Sprintf("group %s, protocol %s/%s, %d members", g.State, g.ProtocolType, g.Protocol, len(g.Members))
}

// describeConfigs lists keys of topic as key=value(source).
func (r *run) describeConfigs(topic string, keys []string) string {
	r.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.SetVersion(4)
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = kmsg.ConfigResourceTypeTopic, topic, keys
	req.Resources = append(req.Resources, rr)
	res := r.do(0, req).(*kmsg.DescribeConfigsResponse).Resources[0]
	if res.ErrorCode != 0 {
		return errName(res.ErrorCode)
	}
	var out []string
	for _, c := range res.Configs {
		v := "null"
		if c.Value != nil {
			v = *c.Value
		}
		out = append(out, fmt.Sprintf("%s=%s(%s)", c.Name, v, strings.ToLower(c.Source.String())))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// alterConfigs applies {name, op (0 set, 1 delete), value} to topic.
func (r *run) alterConfigs(topic string, ops [][3]string) string {
	r.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.SetVersion(1)
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	for _, o := range ops {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name = o[0]
		if o[1] == "1" {
			c.Op = kmsg.IncrementalAlterConfigOpDelete
		} else {
			c.Value = kmsg.StringPtr(o[2])
		}
		rr.Configs = append(rr.Configs, c)
	}
	req.Resources = append(req.Resources, rr)
	return errName(r.do(0, req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode)
}
