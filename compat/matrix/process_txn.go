package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// adapterTxn is one line of a transact operation's input: one transaction.
type adapterTxn struct {
	Records []adapterRecord `json:"records"`
	Commit  bool            `json:"commit"`
	Offsets *adapterOffsets `json:"offsets"`
	// Await asks the adapter to answer "produced" once the records are
	// acknowledged and the offsets sent, and to read one more line (any)
	// before it ends the transaction.
	Await bool `json:"await"`
}

type adapterRecord struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type adapterOffsets struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// Transact runs the adapter's transact operation: it initialises the
// transactional producer of cfg.TransactionalID, then for each line of
// input begins a transaction, produces its records (every one
// acknowledged before the transaction ends, so an aborted record is in the
// log too), sends its offsets and commits or aborts it, answering
// {"type":"txn","index":i} once it has ended. A transaction with BeforeEnd
// is held open ("produced", then a line from us) while BeforeEnd runs. An
// error ends the operation with "fatal".
func (p Process) Transact(ctx context.Context, tc TxnConfig, txns []Txn) error {
	cfg := newAdapterConfig(tc.Bootstrap, tc.ClientID)
	cfg.Topic, cfg.Partition, cfg.TransactionalID = tc.Topic, tc.Partition, tc.TransactionalID
	r, err := p.start("transact", cfg)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, r.kill)
	defer stop()
	produced := make(chan int, len(txns))
	linesDone := make(chan struct{})
	werr := make(chan error, 1)
	go func() { werr <- p.writeTxns(r, txns, produced, linesDone) }()
	var failed error
	var ended []int
	for l := range r.lines {
		switch l.Type {
		case "notSupported":
			failed = notSupported(p.name, "%s", l.Reason)
		case "fatal":
			if l.Error == nil {
				l.Error = &AdapterError{Name: "fatal"}
			}
			failed = l.Error.asError()
		case "error":
			if l.Error != nil && l.Error.Protocol && failed == nil {
				failed = l.Error.asError()
			}
		case "produced":
			produced <- l.Index
		case "txn":
			ended = append(ended, l.Index)
		}
	}
	close(linesDone)
	if err := <-werr; err != nil && failed == nil && !errors.Is(err, syscall.EPIPE) {
		failed = err
	}
	if err := r.finish(p.name, 30*time.Second); err != nil && failed == nil {
		failed = err
	}
	switch {
	case failed != nil:
		return failed
	case ctx.Err() != nil:
		return ctx.Err()
	case len(ended) != len(txns):
		return fmt.Errorf("%s ended transactions %v, want all %d", p.name, ended, len(txns))
	}
	for i, idx := range ended {
		if idx != i {
			return fmt.Errorf("%s ended transactions in the order %v", p.name, ended)
		}
	}
	return nil
}

// writeTxns writes one line per transaction, then closes the adapter's
// input. For a transaction with BeforeEnd it waits for the adapter's
// "produced", runs BeforeEnd and writes the line that lets it end; it
// stops early when the adapter's output ends (it failed).
func (p Process) writeTxns(r *running, txns []Txn, produced <-chan int, linesDone <-chan struct{}) error {
	defer r.stdin.Close()
	enc := json.NewEncoder(r.stdin)
	for i, txn := range txns {
		line := adapterTxn{Commit: txn.Commit, Records: []adapterRecord{}, Await: txn.BeforeEnd != nil}
		for _, rec := range txn.Records {
			line.Records = append(line.Records, adapterRecord{rec.Key, rec.Value})
		}
		if o := txn.Offsets; o != nil {
			line.Offsets = &adapterOffsets{o.Group, o.Topic, o.Partition, o.Offset}
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
		if txn.BeforeEnd == nil {
			continue
		}
		select {
		case got := <-produced:
			if got != i {
				return fmt.Errorf("%s held transaction %d open, want %d", p.name, got, i)
			}
		case <-linesDone:
			return nil
		}
		if err := txn.BeforeEnd(); err != nil {
			return err
		}
		if err := enc.Encode(struct{}{}); err != nil {
			return err
		}
	}
	return nil
}
