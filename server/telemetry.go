package server

// GetTelemetrySubscriptions and PushTelemetry, version 0 (KIP-714), as a
// Kafka broker without a client-metrics receiver plugin answers them.
//
// Such a broker leaves both keys out of ApiVersions (protocol.Unadvertised),
// so Java clients and librdkafka never send telemetry; a client that sends
// the requests anyway gets an empty subscription: its client instance id
// (generated when the request carries the zero id), Kafka's subscription
// id for it, no requested metrics, Kafka's default push interval (5
// minutes), the compression types Kafka accepts and telemetry.max.bytes (1
// MiB). A push needs a client instance id other than Kafka's reserved zero
// and one ids (else INVALID_REQUEST) and its subscription id (else
// UNKNOWN_SUBSCRIPTION_ID), an accepted compression type (else
// UNSUPPORTED_COMPRESSION_TYPE) and at most telemetry.max.bytes of metrics
// (else TELEMETRY_TOO_LARGE); the metrics are dropped, as no plugin
// receives them. fakekafka keeps no state per client instance, so unlike
// Kafka it does not throttle (THROTTLING_QUOTA_EXCEEDED) a client that asks
// or pushes again within the push interval.

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	telemetryPushIntervalMillis = 300000  // ClientMetricsConfigs' default interval.ms
	telemetryMaxBytes           = 1 << 20 // telemetry.max.bytes default
)

// telemetryCompressionTypes are the codecs Kafka accepts for pushed
// metrics: zstd, lz4, gzip, snappy (and none, which needs no listing).
var telemetryCompressionTypes = []int8{4, 3, 1, 2}

// telemetrySubscriptionID is Kafka's id of a client instance's
// subscription (ClientMetricsManager): the CRC32C of its metric list and
// push interval as Java prints them, "[]300000" for the empty set, XORed
// with the instance id's Java hashCode.
func telemetrySubscriptionID(instance [16]byte) int32 {
	crc := crc32.Checksum([]byte("[]"+strconv.Itoa(telemetryPushIntervalMillis)), crc32.MakeTable(crc32.Castagnoli))
	h := binary.BigEndian.Uint64(instance[:8]) ^ binary.BigEndian.Uint64(instance[8:])
	return int32(crc) ^ int32(h>>32) ^ int32(h)
}

// reservedInstanceID says whether id is one Kafka reserves (Uuid.RESERVED:
// zero, and the metadata topic's id 1), which no client instance has.
func reservedInstanceID(id [16]byte) bool {
	return id == [16]byte{} || id == [16]byte{15: 1}
}

func (cn *conn) handleGetTelemetrySubscriptions(req *kmsg.GetTelemetrySubscriptionsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
	resp.ClientInstanceID = req.ClientInstanceID
	if req.ClientInstanceID == ([16]byte{}) {
		resp.ClientInstanceID = newTopicID() // a random, non-zero Uuid
	}
	resp.SubscriptionID = telemetrySubscriptionID(resp.ClientInstanceID)
	resp.AcceptedCompressionTypes = slices.Clone(telemetryCompressionTypes)
	resp.PushIntervalMillis = telemetryPushIntervalMillis
	resp.TelemetryMaxBytes = telemetryMaxBytes
	resp.DeltaTemporality = true
	resp.RequestedMetrics = []string{} // no metrics subscribed
	return resp, nil
}

func (cn *conn) handlePushTelemetry(req *kmsg.PushTelemetryRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.PushTelemetryResponse)
	switch {
	case reservedInstanceID(req.ClientInstanceID):
		resp.ErrorCode = kerr.InvalidRequest.Code
	case req.SubscriptionID != telemetrySubscriptionID(req.ClientInstanceID):
		resp.ErrorCode = kerr.UnknownSubscriptionID.Code
	case req.CompressionType != 0 && !slices.Contains(telemetryCompressionTypes, req.CompressionType):
		resp.ErrorCode = kerr.UnsupportedCompressionType.Code
	case len(req.Metrics) > telemetryMaxBytes:
		resp.ErrorCode = kerr.TelemetryTooLarge.Code
	}
	return resp, nil
}
