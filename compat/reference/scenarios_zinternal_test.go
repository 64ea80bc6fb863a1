package reference

// Named to sort last: its init appends the last scenario, which deletes
// the internal topics of the shared clusters, so nothing runs after it.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	scenarios = append(scenarios, scenario{
		name: "internal-topics-and-auto-creation",
		rows: []string{
			"Metadata v12 allowing auto-creation of a new topic: the first answer, then the next",
			"a franz-go group commits and a transaction commits, then DeleteTopics (v6 by name) of __consumer_offsets and __transaction_state, as a clean-up deleting every topic does",
			"… then a franz-go group consumes and commits, and a transactional producer commits",
		},
		run: func(r *run) []string {
			var rows []string
			rows = append(rows, r.autoCreateAnswers("auto-created"))
			r.create("before-internal", nil)
			before := r.groupAndTxn("before-internal")

			req := kmsg.NewPtrDeleteTopicsRequest()
			req.SetVersion(6)
			req.TimeoutMillis = 30000
			for _, name := range []string{"__consumer_offsets", "__transaction_state"} {
				t := kmsg.NewDeleteTopicsRequestTopic()
				t.Topic = kmsg.StringPtr(name)
				req.Topics = append(req.Topics, t)
			}
			resp := r.do(1, req).(*kmsg.DeleteTopicsResponse)
			var del []string
			for _, t := range resp.Topics {
				del = append(del, fmt.Sprintf("%s %s", *t.Topic, errName(t.ErrorCode)))
			}
			slices.Sort(del) // Kafka answers in no particular order
			rows = append(rows, before+"; "+strings.Join(del, "; "))
			r.create("after-internal", nil)
			rows = append(rows, r.groupAndTxn("after-internal"))
			return rows
		},
	})
}

// autoCreateAnswers asks broker 1 for a new topic with auto-creation on,
// then again until it is served.
func (r *run) autoCreateAnswers(topic string) string {
	r.Helper()
	ask := func() *kmsg.MetadataResponseTopic {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(12)
		req.AllowAutoTopicCreation = true
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		resp := r.do(1, req).(*kmsg.MetadataResponse)
		return &resp.Topics[0]
	}
	show := func(t *kmsg.MetadataResponseTopic) string {
		id := "topic id zero"
		if t.TopicID != [16]byte{} {
			id = "topic id set"
		}
		return fmt.Sprintf("%s, %d partitions, %s, internal %v", errName(t.ErrorCode), len(t.Partitions), id, t.IsInternal)
	}
	first := show(ask())
	var next string
	r.waitFor(topic+" served", func() bool {
		t := ask()
		next = show(t)
		return t.ErrorCode == 0 && len(t.Partitions) > 0 && t.Partitions[0].Leader >= 0
	})
	return "first: " + first + "; then: " + next
}

// groupAndTxn runs a group consumer (which commits) and a transactional
// producer (which commits) on topic.
func (r *run) groupAndTxn(topic string) string {
	r.Helper()
	r.produce(topic, acksAll, vals("a", 0, 3)...)
	ctx, cancel := context.WithTimeout(r.ctx, 90*time.Second)
	defer cancel()
	var out []string
	cons := r.client(kgo.ConsumerGroup(topic+"-group"), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	n := 0
	for n < 3 && ctx.Err() == nil {
		fs := cons.PollFetches(ctx)
		n += fs.NumRecords()
	}
	out = append(out, fmt.Sprintf("group read %d", n))
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		out = append(out, "commit: "+shortErr(err))
	} else {
		out = append(out, "commit ok")
	}
	txn := r.client(kgo.TransactionalID(topic+"-txn"), kgo.DefaultProduceTopic(topic))
	if err := txn.BeginTransaction(); err != nil {
		out = append(out, "begin: "+shortErr(err))
		return strings.Join(out, "; ")
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("t")}).FirstErr(); err != nil {
		out = append(out, "transactional produce: "+shortErr(err))
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		out = append(out, "commit transaction: "+shortErr(err))
	} else {
		out = append(out, "transaction committed")
	}
	return strings.Join(out, "; ")
}

// shortErr is an error without addresses: its first line up to a colon.
func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}
