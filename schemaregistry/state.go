package schemaregistry

// State is the registry's content as replayed from _schemas (subjects,
// versions, ids, configs, modes): pure, no I/O; its methods take its own
// lock.
type State struct{}

// NewState is an empty registry.
func NewState() *State { return &State{} }

// Replay applies one record of _schemas, in log order. Keys it does not
// know (a NOOP, a future keytype) are skipped, as Confluent's store does.
func (s *State) Replay(rec Record) error { return nil }
