package matrix

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// adapterTxn is one line of a transact operation's input: one transaction.
type adapterTxn struct {
	Records []adapterRecord `json:"records"`
	Commit  bool            `json:"commit"`
}

type adapterRecord struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Transact runs the adapter's transact operation: it initialises the
// transactional producer of cfg.TransactionalID, then for each line of
// input begins a transaction, produces its records (every one
// acknowledged before the transaction ends, so an aborted record is in the
// log too) and commits or aborts it, answering {"type":"txn","index":i}
// once it has ended. An error ends the operation with "fatal".
func (p Process) Transact(ctx context.Context, tc TxnConfig, txns []Txn) error {
	cfg := newAdapterConfig(tc.Bootstrap, tc.ClientID)
	cfg.Topic, cfg.Partition, cfg.TransactionalID = tc.Topic, tc.Partition, tc.TransactionalID
	write := func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, txn := range txns {
			line := adapterTxn{Commit: txn.Commit, Records: []adapterRecord{}}
			for _, r := range txn.Records {
				line.Records = append(line.Records, adapterRecord{r.Key, r.Value})
			}
			if err := enc.Encode(line); err != nil {
				return err
			}
		}
		return nil
	}
	var mu sync.Mutex
	var ended []int
	_, err := p.run(ctx, "transact", cfg, write, func(l adapterLine) {
		if l.Type == "txn" {
			mu.Lock()
			ended = append(ended, l.Index)
			mu.Unlock()
		}
	})
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ended) != len(txns) {
		return fmt.Errorf("%s ended transactions %v, want all %d", p.name, ended, len(txns))
	}
	for i, idx := range ended {
		if idx != i {
			return fmt.Errorf("%s ended transactions in the order %v", p.name, ended)
		}
	}
	return nil
}
