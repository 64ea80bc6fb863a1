package server

// DescribeTransactions (v0) and ListTransactions (v0-2), answered by
// transaction coordinators from the shards they lead.
//
// DescribeTransactions: per id, the coordinator errors (NOT_COORDINATOR
// when another broker coordinates it), TRANSACTIONAL_ID_NOT_FOUND when
// unknown, else its state, timeout, start time, producer id and epoch and
// partitions. ListTransactions: every transaction this broker coordinates,
// filtered by state (unknown names are echoed in UnknownStateFilters),
// producer id, minimum running time (v1+) and a transactional id regular
// expression (v2+, matching the whole id as Kafka's re2j matches(),
// INVALID_REGULAR_EXPRESSION if it does not compile). The duration filter
// keeps transactions started more than that long ago, completed ones too
// (their start time stays). An empty id in DescribeTransactions is
// INVALID_REQUEST.
//
// With the authorizer, ids the principal may not DESCRIBE are
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (Describe) or left out (List), and
// Describe leaves out the topics it may not DESCRIBE, as Kafka does.

import (
	"regexp"
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleDescribeTransactions(req *kmsg.DescribeTransactionsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.ProducerEpoch, st.StartTimestamp = id, 0, 0, 0 // as Kafka, for an unknown id or one the principal may not describe
		if !cn.allowedTxn(authorizer.OpDescribe, id) {
			st.ErrorCode = errTxnAuth
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		if id == "" { // Kafka's coordinator refuses an empty id
			st.ErrorCode = kerr.InvalidRequest.Code
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		e, code := c.txnEntry(cn.b.id, id, false)
		if code == 0 && e == nil {
			code = kerr.TransactionalIDNotFound.Code
		}
		if code == 0 {
			md, exists, _ := e.View()
			if !exists {
				code = kerr.TransactionalIDNotFound.Code
			} else {
				st.State, st.TimeoutMillis, st.StartTimestamp = md.State.String(), md.TimeoutMs, md.TxnStartMs
				st.ProducerID, st.ProducerEpoch = md.ProducerID, md.ProducerEpoch
				for _, tp := range md.Partitions {
					if !cn.allowedQuiet(authorizer.OpDescribe, authorizer.ResourceTopic, tp.Topic) {
						continue
					}
					if n := len(st.Topics); n > 0 && st.Topics[n-1].Topic == tp.Topic {
						st.Topics[n-1].Partitions = append(st.Topics[n-1].Partitions, tp.Partition)
						continue
					}
					t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
					t.Topic, t.Partitions = tp.Topic, []int32{tp.Partition}
					st.Topics = append(st.Topics, t)
				}
			}
		}
		st.ErrorCode = code
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp, nil
}

func (cn *conn) handleListTransactions(req *kmsg.ListTransactionsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	var states []transaction.State
	for _, name := range req.StateFilters {
		if s, ok := transaction.ParseState(name); ok {
			states = append(states, s)
		} else {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
		}
	}
	var pattern *regexp.Regexp
	if req.Version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		var err error
		if pattern, err = regexp.Compile(*req.TransactionalIDPattern); err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			return resp, nil
		}
		// Java's Matcher.matches(): the whole id, not a part of it.
		pattern = regexp.MustCompile(`^(?:` + pattern.String() + `)$`)
	}
	nowMs := c.now().UnixMilli()
	for _, md := range c.coordinatedTransactions(cn.b.id) {
		switch {
		case len(states) > 0 && !slices.Contains(states, md.State),
			len(req.StateFilters) > 0 && len(states) == 0,
			len(req.ProducerIDFilters) > 0 && !slices.Contains(req.ProducerIDFilters, md.ProducerID),
			req.Version >= 1 && req.DurationFilterMillis >= 0 && nowMs-md.TxnStartMs <= req.DurationFilterMillis,
			pattern != nil && !pattern.MatchString(md.TransactionalID),
			!cn.allowedQuiet(authorizer.OpDescribe, authorizer.ResourceTransactionalID, md.TransactionalID):
			continue
		}
		st := kmsg.NewListTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.TransactionState = md.TransactionalID, md.ProducerID, md.State.String()
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp, nil
}

// coordinatedTransactions returns the metadata of every transactional id
// broker coordinates, by id.
func (c *Cluster) coordinatedTransactions(broker int32) []transaction.Metadata {
	if c.topic(txnStateTopic) == nil {
		return nil
	}
	shards, err := c.txn.rt.Shards()
	if err != nil {
		return nil
	}
	var out []transaction.Metadata
	for _, sh := range shards {
		if st, _, code := sh.Acquire(broker); code == 0 {
			out = append(out, st.Snapshot()...)
		}
	}
	slices.SortFunc(out, func(a, b transaction.Metadata) int {
		switch {
		case a.TransactionalID < b.TransactionalID:
			return -1
		case a.TransactionalID > b.TransactionalID:
			return 1
		}
		return 0
	})
	return out
}
