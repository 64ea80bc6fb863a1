package server

import (
	"errors"
	"testing"
	"time"

	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupAlter sends one IncrementalAlterConfigs on group's GROUP resource.
func groupAlter(t *testing.T, cl *kgo.Client, group string, validateOnly bool, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) (int16, string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.Configs = kmsg.ConfigResourceTypeGroupConfig, group, ops
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Resources[0]
	msg := ""
	if r.ErrorMessage != nil {
		msg = *r.ErrorMessage
	}
	return r.ErrorCode, msg
}

func groupSet(name, value string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	op := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	op.Name, op.Value = name, kmsg.StringPtr(value)
	return op
}

func groupDelete(name string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	op := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	op.Name, op.Op = name, kmsg.IncrementalAlterConfigOpDelete
	return op
}

// describeGroupConfigs describes group's configs (with synonyms) by name.
func describeGroupConfigs(t *testing.T, cl *kgo.Client, group string) map[string]kmsg.DescribeConfigsResponseResourceConfig {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms, req.IncludeDocumentation = true, true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.Resources[0].ErrorCode; code != 0 {
		t.Fatalf("describe group %q: %v", group, errorName(code))
	}
	out := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range resp.Resources[0].Configs {
		out[c.Name] = c
	}
	return out
}

// TestGroupConfigs sets, validates, describes and deletes group configs
// over the protocol, as kafka-configs --entity-type groups does, with
// Kafka 4.4's answers (checked against Kafka by compat/reference's
// TestConfigAlters).
func TestGroupConfigs(t *testing.T) {
	c := NewTestCluster(t, Config{})
	cl := newClient(t, c)

	for _, tc := range []struct {
		name string
		ops  []kmsg.IncrementalAlterConfigsRequestResourceConfig
		code int16
		msg  string
	}{
		{"below the broker's minimum", []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupSet("consumer.session.timeout.ms", "10000")},
			kerr.InvalidConfig.Code, "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive."},
		{"lock duration below the broker's minimum", []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupSet("share.record.lock.duration.ms", "5000")},
			kerr.InvalidConfig.Code, "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive."},
		{"below the config's own minimum", []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupSet("share.delivery.count.limit", "1")},
			kerr.InvalidConfig.Code, "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2"},
		{"unknown", []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupSet("no.such.config", "1")},
			kerr.InvalidConfig.Code, "Unknown group config name: no.such.config"},
		{"above the broker's maximum", []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupSet("streams.num.standby.replicas", "5")},
			kerr.InvalidConfig.Code, "streams.num.standby.replicas must be less than or equal to 2"},
		{"not a list", []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "consumer.session.timeout.ms", Op: kmsg.IncrementalAlterConfigOpAppend, Value: kmsg.StringPtr("1")}},
			kerr.InvalidConfig.Code, "Can't APPEND to key consumer.session.timeout.ms because its type is not LIST."},
	} {
		if code, msg := groupAlter(t, cl, "cfg", false, tc.ops...); code != tc.code || msg != tc.msg {
			t.Errorf("%s: %v %q, want %v %q", tc.name, errorName(code), msg, errorName(tc.code), tc.msg)
		}
	}
	if code, msg := groupAlter(t, cl, "", false, groupSet("consumer.session.timeout.ms", "50000")); code != kerr.InvalidRequest.Code || msg != "Default group resources are not allowed." {
		t.Errorf("default group resource: %v %q", errorName(code), msg)
	}

	// Validate-only changes nothing; a real change is described.
	if code, _ := groupAlter(t, cl, "cfg", true, groupSet("consumer.session.timeout.ms", "50000")); code != 0 {
		t.Fatalf("validate-only: %v", errorName(code))
	}
	if got := c.GroupConfigs("cfg"); len(got) != 0 {
		t.Fatalf("configs after validate-only: %v", got)
	}
	if code, msg := groupAlter(t, cl, "cfg", false, groupSet("consumer.session.timeout.ms", "50000"), groupSet("share.auto.offset.reset", "by_duration:PT1H")); code != 0 {
		t.Fatalf("alter: %v %q", errorName(code), msg)
	}
	d := describeGroupConfigs(t, cl, "cfg")
	s := d["consumer.session.timeout.ms"]
	if s.Value == nil || *s.Value != "50000" || s.Source != kmsg.ConfigSourceGroupConfig || s.ReadOnly || s.ConfigType != kmsg.ConfigTypeInt ||
		len(s.ConfigSynonyms) != 2 || s.ConfigSynonyms[1].Name != "group.consumer.session.timeout.ms" || s.ConfigSynonyms[1].Source != kmsg.ConfigSourceDefaultConfig ||
		s.Documentation == nil || *s.Documentation == "" {
		t.Errorf("consumer.session.timeout.ms described as %+v", s)
	}
	if h := d["consumer.heartbeat.interval.ms"]; h.Value == nil || *h.Value != "5000" || h.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("consumer.heartbeat.interval.ms described as %+v", h)
	}
	if r := d["share.auto.offset.reset"]; r.Value == nil || *r.Value != "by_duration:PT1H" || len(r.ConfigSynonyms) != 2 || r.ConfigSynonyms[1].Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("share.auto.offset.reset described as %+v", r)
	}
	if gc := c.groupConfig("cfg"); gc.ConsumerSessionTimeout != 50*time.Second || gc.ShareAutoOffsetReset != "by_duration:PT1H" {
		t.Errorf("groupConfig: %+v", gc)
	}
	if gc := c.groupConfig("other"); gc.ConsumerSessionTimeout != 45*time.Second || !gc.ShareRenewAcknowledge {
		t.Errorf("groupConfig of a group without configs: %+v", gc)
	}

	// DELETE reverts, and deleting what is not set is no error.
	if code, _ := groupAlter(t, cl, "cfg", false, groupDelete("consumer.session.timeout.ms"), groupDelete("no.such")); code != 0 {
		t.Fatalf("delete: %v", errorName(code))
	}
	if gc := c.groupConfig("cfg"); gc.ConsumerSessionTimeout != 45*time.Second {
		t.Errorf("after DELETE: %v", gc.ConsumerSessionTimeout)
	}
	if s := describeGroupConfigs(t, cl, "cfg")["consumer.session.timeout.ms"]; s.Source != kmsg.ConfigSourceDefaultConfig || len(s.ConfigSynonyms) != 1 {
		t.Errorf("after DELETE described as %+v", s)
	}

	// The legacy AlterConfigs replaces the group's configs.
	req := kmsg.NewPtrAlterConfigsRequest()
	rr := kmsg.NewAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "cfg"
	cfg := kmsg.NewAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = "share.isolation.level", kmsg.StringPtr("read_committed")
	rr.Configs = append(rr.Configs, cfg)
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("AlterConfigs: %v %+v", err, resp)
	}
	if got := c.GroupConfigs("cfg"); len(got) != 1 || got["share.isolation.level"] != "read_committed" {
		t.Errorf("configs after AlterConfigs: %v", got)
	}
}

// TestGroupConfigBounds: the broker's bounds (Config.BrokerConfigs, by
// Kafka's names) decide what a group may set.
func TestGroupConfigBounds(t *testing.T) {
	c := NewTestCluster(t, Config{BrokerConfigs: map[string]string{
		"group.consumer.min.session.timeout.ms":    "2000",
		"group.consumer.min.heartbeat.interval.ms": "500",
		"group.share.min.record.lock.duration.ms":  "1000",
	}})
	if err := c.AlterGroupConfig("g", map[string]string{"consumer.session.timeout.ms": "3000", "consumer.heartbeat.interval.ms": "1000", "share.record.lock.duration.ms": "2000"}, nil); err != nil {
		t.Fatal(err)
	}
	gc := c.groupConfig("g")
	if gc.ConsumerSessionTimeout != 3*time.Second || gc.ConsumerHeartbeatInterval != time.Second || gc.ShareRecordLockDuration != 2*time.Second {
		t.Errorf("groupConfig: %+v", gc)
	}
	err := c.AlterGroupConfig("g", map[string]string{"consumer.heartbeat.interval.ms": "3000"}, nil)
	if !errors.Is(err, kerr.InvalidConfig) {
		t.Errorf("heartbeat interval equal to the session timeout: %v, want INVALID_CONFIG", err)
	}
	if _, err := NewCluster(Config{BrokerConfigs: map[string]string{"no.such.config": "1"}}); err == nil {
		t.Error("an unknown broker config in BrokerConfigs was taken")
	}
}

// TestGroupConfigsSurvive: group configs live in the cluster's metadata:
// a coordinator failover keeps them and so does a restart from --data-dir.
func TestGroupConfigsSurvive(t *testing.T) {
	dir := t.TempDir()
	c1, err := NewCluster(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]string{"consumer.session.timeout.ms": "55000", "share.delivery.count.limit": "3"}
	if err := c1.AlterGroupConfig("kept", set, nil); err != nil {
		t.Fatal(err)
	}
	if err := c1.AlterBrokerConfig(map[string]string{"log.cleaner.threads": "2"}, nil); err != nil {
		t.Fatal(err)
	}
	if code, msg := incAlter(t, c1, 2, kmsg.ConfigResourceTypeBroker, "2", groupSet("log.cleaner.min.compaction.lag.ms", "7")); code != 0 {
		t.Fatalf("broker 2's own config: %v %s", errorName(code), msg)
	}
	coord, _ := c1.coordinatorOf("kept")
	if err := c1.StopBroker(coord, StopCrash); err != nil {
		t.Fatal(err)
	}
	if gc := c1.groupConfig("kept"); gc.ConsumerSessionTimeout != 55*time.Second || gc.ShareDeliveryCountLimit != 3 {
		t.Errorf("after the coordinator crashed: %+v", gc)
	}
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}
	c2, err := NewCluster(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c2.Close() })
	if gc := c2.groupConfig("kept"); gc.ConsumerSessionTimeout != 55*time.Second || gc.ShareDeliveryCountLimit != 3 {
		t.Errorf("after a restart: %+v", gc)
	}
	if v, _ := c2.brokerSettings().value(clusterLevel, "log.cleaner.threads"); v != "2" {
		t.Errorf("log.cleaner.threads after a restart: %q", v)
	}
	if v, _ := c2.brokerSettings().value(2, "log.cleaner.min.compaction.lag.ms"); v != "7" {
		t.Errorf("broker 2's own log.cleaner.min.compaction.lag.ms after a restart: %q", v)
	}
	if v, _ := c2.brokerSettings().value(1, "log.cleaner.min.compaction.lag.ms"); v != "0" {
		t.Errorf("broker 1's log.cleaner.min.compaction.lag.ms after a restart: %q, want Kafka's default 0", v)
	}
}

// TestGroupSessionTimeoutFencesMember: a group's own
// consumer.session.timeout.ms decides when its KIP-848 member that stopped
// heartbeating is fenced, on the cluster's clock.
func TestGroupSessionTimeoutFencesMember(t *testing.T) {
	c := manualCluster(t, Config{BrokerConfigs: map[string]string{"group.consumer.min.session.timeout.ms": "10000"}})
	if err := c.CreateTopic("work", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	if code, msg := groupAlter(t, cl, "short", false, groupSet("consumer.session.timeout.ms", "20000"), groupSet("consumer.heartbeat.interval.ms", "6000")); code != 0 {
		t.Fatalf("alter: %v %s", errorName(code), msg)
	}
	heartbeat := func(group string, epoch int32) *kmsg.ConsumerGroupHeartbeatResponse {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version = 1
		req.Group, req.MemberID, req.MemberEpoch = group, "member-"+group, epoch
		if epoch == 0 {
			req.RebalanceTimeoutMillis, req.SubscribedTopicNames = 60_000, []string{"work"}
		}
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	short, long := heartbeat("short", 0), heartbeat("long", 0)
	if short.ErrorCode != 0 || long.ErrorCode != 0 {
		t.Fatalf("joins: %v %v", errorName(short.ErrorCode), errorName(long.ErrorCode))
	}
	if short.HeartbeatIntervalMillis != 6000 || long.HeartbeatIntervalMillis != 5000 {
		t.Errorf("heartbeat intervals %d and %d, want the group's 6000 and the broker's 5000", short.HeartbeatIntervalMillis, long.HeartbeatIntervalMillis)
	}
	members := func(g string) int { gs, _ := c.Group(g); return len(gs.Members) }
	c.AdvanceClock(20*time.Second - time.Millisecond)
	if members("short") != 1 {
		t.Fatal("the member left before its group's 20 s session timeout")
	}
	c.AdvanceClock(time.Millisecond)
	if members("short") != 0 || members("long") != 1 {
		t.Fatalf("after 20 s: %d and %d members, want 0 (fenced) and 1", members("short"), members("long"))
	}
	if code := heartbeat("short", short.MemberEpoch).ErrorCode; code != kerr.UnknownMemberID.Code {
		t.Errorf("heartbeat of the fenced member: %v, want UNKNOWN_MEMBER_ID", errorName(code))
	}
	c.AdvanceClock(25 * time.Second) // 45 s: the broker's default
	if members("long") != 0 {
		t.Fatal("the member of a group without configs outlived the broker's 45 s")
	}

	// A change takes effect at the member's next heartbeat.
	later := heartbeat("later", 0)
	if later.ErrorCode != 0 || later.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("join: %v, interval %d", errorName(later.ErrorCode), later.HeartbeatIntervalMillis)
	}
	if err := c.AlterGroupConfig("later", map[string]string{"consumer.session.timeout.ms": "12000"}, nil); err != nil {
		t.Fatal(err)
	}
	if hb := heartbeat("later", later.MemberEpoch); hb.ErrorCode != 0 {
		t.Fatalf("heartbeat: %v", errorName(hb.ErrorCode))
	}
	c.AdvanceClock(12*time.Second - time.Millisecond)
	if members("later") != 1 {
		t.Fatal("fenced before the new 12 s session timeout")
	}
	c.AdvanceClock(time.Millisecond)
	if members("later") != 0 {
		t.Fatal("not fenced 12 s after its last heartbeat under the new session timeout")
	}
}

// TestGroupDefaultsAreKafkas: with Config's defaults, a group without
// configs gets group.DefaultConfig, Kafka 4.4's defaults (from the
// generated catalogue).
func TestGroupDefaultsAreKafkas(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if got, want := c.groupConfig("any"), grp.DefaultConfig(); got != want {
		t.Errorf("groupConfig of a group without configs:\n got  %+v\n want %+v", got, want)
	}
}
