package fakekafka

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/api"
)

// Control is a client of fakekafka's HTTP control API (the same API the
// binary serves outside a container). Every method maps to one endpoint;
// an error the API answers is an *APIError.
type Control struct {
	base string
	hc   *http.Client
}

// NewControl returns a client of the control API at base (e.g.
// "http://127.0.0.1:8080"); nil hc means http.DefaultClient.
func NewControl(base string, hc *http.Client) *Control {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Control{base: strings.TrimRight(base, "/"), hc: hc}
}

// APIError is an error answer of the control API.
type APIError struct {
	Method, Path string
	StatusCode   int
	Message      string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("fakekafka control: %s %s: %d %s", e.Method, e.Path, e.StatusCode, e.Message)
}

// do sends body (nil: none) as JSON and decodes a 2xx answer into out.
func (c *Control) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(raw))
		}
		return &APIError{Method: method, Path: path, StatusCode: resp.StatusCode, Message: e.Error}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("fakekafka control: %s %s: %w", method, path, err)
	}
	return nil
}

func partitionPath(topic string, partition int32) string {
	return "/v1/partitions/" + url.PathEscape(topic) + "/" + strconv.Itoa(int(partition))
}

// Cluster returns the cluster's state: brokers, controller, topics,
// partitions and every replica's offsets (GET /v1/cluster).
func (c *Control) Cluster(ctx context.Context) (ClusterState, error) {
	var s ClusterState
	return s, c.do(ctx, http.MethodGet, "/v1/cluster", nil, &s)
}

// Partition returns one partition's state, from Cluster.
func (c *Control) Partition(ctx context.Context, topic string, partition int32) (PartitionState, error) {
	s, err := c.Cluster(ctx)
	if err != nil {
		return PartitionState{}, err
	}
	for _, t := range s.Topics {
		if t.Name == topic && int(partition) < len(t.Partitions) && partition >= 0 {
			return t.Partitions[partition], nil
		}
	}
	return PartitionState{}, &APIError{Method: http.MethodGet, Path: "/v1/cluster", StatusCode: http.StatusNotFound,
		Message: fmt.Sprintf("no partition %s/%d", topic, partition)}
}

// StopMode is how a broker stops: StopClean, StopCrash or StopPowerLoss.
type StopMode = api.StopMode

// The stop modes.
const (
	StopClean     = api.StopClean
	StopCrash     = api.StopCrash
	StopPowerLoss = api.StopPowerLoss
)

// StopBroker stops broker id (POST /v1/brokers/{id}/stop).
func (c *Control) StopBroker(ctx context.Context, id int32, mode StopMode) (ClusterState, error) {
	var s ClusterState
	return s, c.do(ctx, http.MethodPost, fmt.Sprintf("/v1/brokers/%d/stop", id), map[string]StopMode{"mode": mode}, &s)
}

// StartBroker restarts a stopped broker (POST /v1/brokers/{id}/start).
func (c *Control) StartBroker(ctx context.Context, id int32) (ClusterState, error) {
	var s ClusterState
	return s, c.do(ctx, http.MethodPost, fmt.Sprintf("/v1/brokers/%d/start", id), nil, &s)
}

// IsolateBroker cuts broker id off from the controller and the other
// brokers while clients still reach it: a zombie leader
// (POST /v1/brokers/{id}/isolate).
func (c *Control) IsolateBroker(ctx context.Context, id int32) (ClusterState, error) {
	var s ClusterState
	return s, c.do(ctx, http.MethodPost, fmt.Sprintf("/v1/brokers/%d/isolate", id), nil, &s)
}

// HealBroker ends an isolation (POST /v1/brokers/{id}/heal).
func (c *Control) HealBroker(ctx context.Context, id int32) (ClusterState, error) {
	var s ClusterState
	return s, c.do(ctx, http.MethodPost, fmt.Sprintf("/v1/brokers/%d/heal", id), nil, &s)
}

// PauseReplica stops the follower on broker from fetching; it stays in the
// ISR until replica.lag.time.max.ms passes.
func (c *Control) PauseReplica(ctx context.Context, topic string, partition, broker int32) (PartitionState, error) {
	var s PartitionState
	return s, c.do(ctx, http.MethodPost, fmt.Sprintf("%s/replicas/%d/pause", partitionPath(topic, partition), broker), nil, &s)
}

// ResumeReplica lets a paused follower fetch again.
func (c *Control) ResumeReplica(ctx context.Context, topic string, partition, broker int32) (PartitionState, error) {
	var s PartitionState
	return s, c.do(ctx, http.MethodPost, fmt.Sprintf("%s/replicas/%d/resume", partitionPath(topic, partition), broker), nil, &s)
}

// StepReplica makes a paused follower fetch once, up to offset upTo
// (negative: as far as the leader has).
func (c *Control) StepReplica(ctx context.Context, topic string, partition, broker int32, upTo int64) (PartitionState, error) {
	var body any
	if upTo >= 0 {
		body = map[string]int64{"up_to": upTo}
	}
	var s PartitionState
	return s, c.do(ctx, http.MethodPost, fmt.Sprintf("%s/replicas/%d/fetch", partitionPath(topic, partition), broker), body, &s)
}

// SetISR sets the partition's ISR now.
func (c *Control) SetISR(ctx context.Context, topic string, partition int32, isr []int32) (PartitionState, error) {
	if isr == nil {
		isr = []int32{}
	}
	var s PartitionState
	return s, c.do(ctx, http.MethodPost, partitionPath(topic, partition)+"/isr", map[string][]int32{"isr": isr}, &s)
}

// ElectLeader elects leader (-1: Kafka's own choice); unclean allows a
// replica outside the ISR.
func (c *Control) ElectLeader(ctx context.Context, topic string, partition, leader int32, unclean bool) (PartitionState, error) {
	body := map[string]any{"unclean": unclean}
	if leader >= 0 {
		body["leader"] = leader
	}
	var s PartitionState
	return s, c.do(ctx, http.MethodPost, partitionPath(topic, partition)+"/elect", body, &s)
}

// ElectPreferredLeader elects the first replica of the assignment.
func (c *Control) ElectPreferredLeader(ctx context.Context, topic string, partition int32) (PartitionState, error) {
	var s PartitionState
	return s, c.do(ctx, http.MethodPost, partitionPath(topic, partition)+"/elect", map[string]bool{"preferred": true}, &s)
}

// Fault is a fault-injection rule (POST /v1/faults): matching requests get
// Error (Kafka's name, e.g. "NOT_ENOUGH_REPLICAS"), a delay, or a dropped
// connection, Count times (0: until removed).
type Fault struct {
	API            string `json:"api,omitempty"` // Kafka's name: "Produce", "Fetch", ...
	Error          string `json:"error,omitempty"`
	Topic          string `json:"topic,omitempty"`
	Partition      *int32 `json:"partition,omitempty"`
	Broker         int32  `json:"broker,omitempty"`
	ClientID       string `json:"client_id,omitempty"`
	Count          int    `json:"count,omitempty"`
	DelayMillis    int64  `json:"delay_ms,omitempty"`
	DropConnection bool   `json:"drop_connection,omitempty"`
	AfterWork      bool   `json:"after_work,omitempty"`
}

// InjectFault adds a fault rule and returns it with its id.
func (c *Control) InjectFault(ctx context.Context, f Fault) (FaultState, error) {
	var s FaultState
	return s, c.do(ctx, http.MethodPost, "/v1/faults", f, &s)
}

// Faults lists the fault rules in insertion order.
func (c *Control) Faults(ctx context.Context) ([]FaultState, error) {
	var out struct {
		Faults []FaultState `json:"faults"`
	}
	return out.Faults, c.do(ctx, http.MethodGet, "/v1/faults", nil, &out)
}

// Fault returns one fault rule, with how often it fired.
func (c *Control) Fault(ctx context.Context, id string) (FaultState, error) {
	var s FaultState
	return s, c.do(ctx, http.MethodGet, "/v1/faults/"+url.PathEscape(id), nil, &s)
}

// RemoveFault removes a rule and returns its final state.
func (c *Control) RemoveFault(ctx context.Context, id string) (FaultState, error) {
	var s FaultState
	return s, c.do(ctx, http.MethodDelete, "/v1/faults/"+url.PathEscape(id), nil, &s)
}

// Groups lists the consumer groups.
func (c *Control) Groups(ctx context.Context) ([]GroupState, error) {
	var out struct {
		Groups []GroupState `json:"groups"`
	}
	return out.Groups, c.do(ctx, http.MethodGet, "/v1/groups", nil, &out)
}

// Group returns one consumer group.
func (c *Control) Group(ctx context.Context, group string) (GroupState, error) {
	var s GroupState
	return s, c.do(ctx, http.MethodGet, "/v1/groups/"+url.PathEscape(group), nil, &s)
}

// Listeners returns every listener with its bound and advertised address
// per broker.
func (c *Control) Listeners(ctx context.Context) ([]ListenerState, error) {
	var out []ListenerState
	return out, c.do(ctx, http.MethodGet, "/v1/listeners", nil, &out)
}

// SetAdvertised changes the advertised HOST:PORT of listener name for the
// brokers in addrs (by broker id), e.g. to put a proxy in front of them.
func (c *Control) SetAdvertised(ctx context.Context, name string, addrs map[int32]string) (ListenerState, error) {
	body := map[string]string{}
	for id, a := range addrs {
		body[strconv.Itoa(int(id))] = a
	}
	return c.setAdvertised(ctx, name, body)
}

func (c *Control) setAdvertised(ctx context.Context, name string, body map[string]string) (ListenerState, error) {
	var s ListenerState
	return s, c.do(ctx, http.MethodPut, "/v1/listeners/"+url.PathEscape(name), map[string]any{"advertised": body}, &s)
}

// Ready reports GET /readyz: nil when ready, else an *APIError saying what
// the cluster waits for.
func (c *Control) Ready(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/readyz", nil, nil)
}
