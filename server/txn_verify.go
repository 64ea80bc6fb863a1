package server

// txnOngoingHere reports whether broker, leading p, already has a
// transaction of producer pid open at epoch on p: Kafka's leader then
// appends the producer's next transactional batch without asking the
// coordinator (no verification, no implicit add), so a coordinator busy
// with another partition's add does not slow it down.
func (p *partition) txnOngoingHere(broker int32, pid int64, epoch int16) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st.Leader() != broker {
		return false
	}
	l := p.st.LeaderReplica()
	return l != nil && l.HasOngoingTransaction(pid, epoch)
}
