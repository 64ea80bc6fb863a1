package server

import "github.com/twmb/franz-go/pkg/kmsg"

// noMessage is the error message of an answer without an error where Kafka
// sends an empty string rather than null (DescribeConfigs, FindCoordinator
// v4+, whose v1-v3 say "NONE", DescribeClientQuotas,
// DescribeUserScramCredentials, DescribeQuorum), from version since, the
// first that has the field.
func noMessage(version, since int16) *string {
	if version < since {
		return nil
	}
	return kmsg.StringPtr("")
}
