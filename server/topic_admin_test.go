package server

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestTopicAdminMethods(t *testing.T) {
	c := NewTestCluster(t, Config{})
	scMust(t, c.CreateTopicAssigned("a", [][]int32{{2, 3}, {3, 1}}, map[string]string{"min.insync.replicas": "2"}))
	ts, ok := c.Topic("a")
	if !ok || len(ts.Partitions) != 2 || ts.Partitions[0].Leader != 2 || ts.Configs["min.insync.replicas"] != "2" {
		t.Fatalf("created %+v", ts)
	}
	cs, ok := c.TopicConfig("a")
	i := slices.IndexFunc(cs.Configs, func(e ConfigEntry) bool { return e.Name == "min.insync.replicas" })
	if !ok || i < 0 || cs.Configs[i].Value != "2" || cs.Configs[i].Source != "DYNAMIC_TOPIC_CONFIG" {
		t.Fatalf("TopicConfig: %+v", cs)
	}
	if _, ok := c.TopicConfig("nope"); ok {
		t.Fatal("TopicConfig of an unknown topic")
	}

	for _, tc := range []struct {
		err  error
		is   error
		text string
	}{
		{c.CreateTopicAssigned("a", [][]int32{{1}}, nil), kerr.TopicAlreadyExists, "TOPIC_ALREADY_EXISTS: Topic 'a' already exists."},
		{c.CreateTopicAssigned("b", nil, nil), kerr.InvalidReplicaAssignment, "INVALID_REPLICA_ASSIGNMENT: the assignment lists no partition"},
		{c.CreateTopic("b", 1, 1, map[string]string{"x.y": "1"}), kerr.InvalidConfig, `INVALID_CONFIG: Unknown topic config name: x.y`},
		{c.AlterTopicConfig("a", map[string]string{"retention.ms": "x"}, nil), kerr.InvalidConfig, `INVALID_CONFIG: Invalid value x for configuration retention.ms: Not a number of type LONG`},
		{c.DeleteTopic("nope"), kerr.UnknownTopicOrPartition, `unknown topic "nope"`},
	} {
		if !errors.Is(tc.err, tc.is) || tc.err.Error() != tc.text {
			t.Errorf("error %q (is %v: %v), want %q", tc.err, tc.is, errors.Is(tc.err, tc.is), tc.text)
		}
		if strings.Contains(tc.err.Error(), ".:") {
			t.Errorf("doubled punctuation: %q", tc.err)
		}
	}
	if err := c.DeleteTopic("nope"); !errors.Is(err, ErrUnknownPartition) {
		t.Errorf("DeleteTopic of an unknown topic: %v, want ErrUnknownPartition", err)
	}
	scMust(t, c.DeleteTopic("a"))
	if _, ok := c.Topic("a"); ok {
		t.Fatal("a survived DeleteTopic")
	}
}
