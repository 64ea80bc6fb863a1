package api

// StopMode says how a broker stops.
type StopMode string

const (
	// StopClean is a controlled shutdown: leadership moves to other ISR
	// members first, the log is flushed and the HW checkpointed, so nothing
	// acknowledged is lost.
	StopClean StopMode = "clean"
	// StopCrash drops the listener and every connection at once. The log
	// survives (the page cache does), the in-memory HW does not: a restart
	// reloads the last HW checkpoint. The controller notices after
	// Config.BrokerSessionTimeout.
	StopCrash StopMode = "crash"
	// StopPowerLoss is a crash in which every replica on the broker also
	// loses what was past its recovery point (the unflushed page cache).
	StopPowerLoss StopMode = "powerloss"
)

// FaultState is a rule and how often it fired, as GET /v1/faults lists it.
type FaultState struct {
	ID        string `json:"id"`
	API       string `json:"api"` // "" for any
	Broker    int32  `json:"broker"`
	Topic     string `json:"topic"`
	Partition *int32 `json:"partition"`
	ClientID  string `json:"client_id"`
	// Error is Kafka's name of the error (or its code if Kafka has no name
	// for it that we know), "" for none.
	Error          string `json:"error"`
	ErrorCode      int16  `json:"error_code"`
	Count          int    `json:"count"`
	DelayMillis    int64  `json:"delay_ms"`
	DropConnection bool   `json:"drop_connection"`
	AfterWork      bool   `json:"after_work"`
	Hits           int    `json:"hits"`
	// Remaining is how many more times the rule can fire; -1 when it fires
	// until removed.
	Remaining int `json:"remaining"`
}

// ACLBinding is one binding in JSON form.
type ACLBinding struct {
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  string `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission_type"`
}

// ACLState is what GET /v1/acls answers.
type ACLState struct {
	// Authorizer says whether requests are checked (Config.Authorizer).
	Authorizer                bool         `json:"authorizer"`
	SuperUsers                []string     `json:"super_users"`
	AllowEveryoneIfNoACLFound bool         `json:"allow_everyone_if_no_acl_found"`
	ACLs                      []ACLBinding `json:"acls"`
}

// QuotaEntry is one configured entity and its values.
type QuotaEntry struct {
	Entity map[string]*string `json:"entity"`
	Values map[string]float64 `json:"values"`
}

// QuotaState is what GET /v1/quotas answers.
type QuotaState struct {
	Quotas []QuotaEntry `json:"quotas"`
}

// ListenerState is one listener: its protocol and, per broker, the address
// it is bound to and the one clients are told.
type ListenerState struct {
	Name             string                `json:"name"`
	SecurityProtocol string                `json:"security_protocol"`
	Brokers          []ListenerBrokerState `json:"brokers"`
	// Set says that every broker's advertised address was set at runtime
	// (SetAdvertised) since the cluster started.
	Set bool `json:"set"`
}

// ListenerBrokerState is one broker's end of a listener.
type ListenerBrokerState struct {
	ID         int32  `json:"id"`
	Bind       string `json:"bind"`
	Advertised string `json:"advertised"`
}

// SASLUser is one user as the control API reports it: never a password,
// only which mechanisms it can use.
type SASLUser struct {
	Name  string           `json:"name"`
	Plain bool             `json:"plain"`
	Scram []ScramMechanism `json:"scram"`
}

// ScramMechanism is one SCRAM credential of a user.
type ScramMechanism struct {
	Mechanism  string `json:"mechanism"`
	Iterations int    `json:"iterations"`
}
