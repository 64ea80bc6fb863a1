package server

// GetTelemetrySubscriptions and PushTelemetry, version 0 (KIP-714), as a
// Kafka broker without a client-metrics receiver plugin answers them.
//
// Such a broker leaves both keys out of ApiVersions (protocol.Unadvertised),
// so Java clients and librdkafka never send telemetry; a client that sends
// the requests anyway gets an empty subscription: a client instance id
// (generated when the request carries the zero id), a subscription id, no
// requested metrics, Kafka's default push interval (5 minutes), the
// compression types Kafka accepts and telemetry.max.bytes (1 MiB). A push
// needs a client instance id (else INVALID_REQUEST) and the current
// subscription id (else UNKNOWN_SUBSCRIPTION_ID), an accepted compression
// type (else UNSUPPORTED_COMPRESSION_TYPE) and at most telemetry.max.bytes
// of metrics (else TELEMETRY_TOO_LARGE); the metrics are dropped, as no
// plugin receives them.

import (
	"hash/crc32"
	"slices"

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

// telemetrySubscriptionID identifies the one (empty) subscription set: a
// checksum of its push interval, stable across restarts.
var telemetrySubscriptionID = int32(crc32.ChecksumIEEE([]byte("fakekafka:no-metrics:300000")) & 0x7fffffff)

func (cn *conn) handleGetTelemetrySubscriptions(req *kmsg.GetTelemetrySubscriptionsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
	if req.ClientInstanceID == ([16]byte{}) {
		resp.ClientInstanceID = newTopicID() // a random, non-zero Uuid
	}
	resp.SubscriptionID = telemetrySubscriptionID
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
	case req.ClientInstanceID == ([16]byte{}):
		resp.ErrorCode = kerr.InvalidRequest.Code
	case req.SubscriptionID != telemetrySubscriptionID:
		resp.ErrorCode = kerr.UnknownSubscriptionID.Code
	case req.CompressionType != 0 && !slices.Contains(telemetryCompressionTypes, req.CompressionType):
		resp.ErrorCode = kerr.UnsupportedCompressionType.Code
	case len(req.Metrics) > telemetryMaxBytes:
		resp.ErrorCode = kerr.TelemetryTooLarge.Code
	}
	return resp, nil
}
