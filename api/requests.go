package api

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The bodies of the control API's POST and PUT requests. The handler
// refuses unknown fields, so these are the whole of each body.

// FaultRequest is POST /v1/faults: a fault rule in JSON form (see
// server.Fault). API and Error take names or numbers.
type FaultRequest struct {
	API            NameOrNumber `json:"api"`
	Error          NameOrNumber `json:"error"`
	Topic          string       `json:"topic"`
	Partition      *int32       `json:"partition"`
	Broker         int32        `json:"broker"`
	ClientID       string       `json:"client_id"`
	Count          int          `json:"count"`
	DelayMillis    int64        `json:"delay_ms"`
	DropConnection bool         `json:"drop_connection"`
	AfterWork      bool         `json:"after_work"`
}

// NameOrNumber is a JSON string or integer, kept as text: Kafka's name of
// an API or error, or its number.
type NameOrNumber string

// UnmarshalJSON accepts "Produce" as well as 0.
func (n *NameOrNumber) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*n = NameOrNumber(s)
		return nil
	}
	var i int64
	if err := json.Unmarshal(b, &i); err != nil {
		return fmt.Errorf("want a name or an integer, got %s", b)
	}
	*n = NameOrNumber(strconv.FormatInt(i, 10))
	return nil
}

// StopRequest is POST /v1/brokers/{id}/stop; Mode defaults to crash.
type StopRequest struct {
	Mode StopMode `json:"mode"`
}

// ElectRequest is POST /v1/partitions/{topic}/{partition}/elect: Leader
// nil for Kafka's own choice, or Preferred alone.
type ElectRequest struct {
	Leader    *int32 `json:"leader"`
	Unclean   bool   `json:"unclean"`
	Preferred bool   `json:"preferred"`
}

// ISRRequest is POST /v1/partitions/{topic}/{partition}/isr.
type ISRRequest struct {
	ISR *[]int32 `json:"isr"`
}

// StepRequest is POST /v1/partitions/{topic}/{partition}/replicas/{id}/fetch;
// UpTo nil for one whole fetch.
type StepRequest struct {
	UpTo *int64 `json:"up_to"`
}

// ReassignRequest is POST /v1/partitions/{topic}/{partition}/reassign:
// Replicas a list of broker ids, or null to cancel (nil when missing).
type ReassignRequest struct {
	Replicas json.RawMessage `json:"replicas"`
}

// CreatePartitionsRequest is POST /v1/topics/{topic}/partitions;
// Assignment is optional, one replica list per new partition.
type CreatePartitionsRequest struct {
	Count      *int32    `json:"count"`
	Assignment [][]int32 `json:"assignment"`
}

// AdvertisedRequest is PUT /v1/listeners/{name}: advertised addresses by
// broker id.
type AdvertisedRequest struct {
	Advertised map[string]string `json:"advertised"`
}

// ClockAdvanceRequest is POST /v1/clock/advance.
type ClockAdvanceRequest struct {
	Ms *int64 `json:"ms"`
}

// ACLRequest is POST /v1/acls.
type ACLRequest struct {
	ACLs []ACLBinding `json:"acls"`
}

// QuotaRequest is POST /v1/quotas: an entity (types user, client-id, ip
// to names; null is <default>), values to set and keys to remove.
type QuotaRequest struct {
	Entity map[string]*string `json:"entity"`
	Set    map[string]float64 `json:"set"`
	Remove []string           `json:"remove"`
}

// UserRequest is POST /v1/users.
type UserRequest struct {
	Name     string `json:"name"`
	Password string `json:"password"`
}

// CreateTopicRequest is POST /v1/topics. Partitions and
// ReplicationFactor default to the cluster's num.partitions and
// default.replication.factor; Assignment (one broker list per partition,
// the first the preferred leader) replaces both.
type CreateTopicRequest struct {
	Name              string            `json:"name"`
	Partitions        *int32            `json:"partitions"`
	ReplicationFactor *int16            `json:"replication_factor"`
	Configs           map[string]string `json:"configs"`
	Assignment        [][]int32         `json:"assignment"`
}

// TopicConfigRequest is PATCH /v1/topics/{topic}/configs, as
// IncrementalAlterConfigs: Set adds or replaces values, Delete reverts
// configs to the broker default.
type TopicConfigRequest struct {
	Set    map[string]string `json:"set"`
	Delete []string          `json:"delete"`
}
