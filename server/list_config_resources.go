package server

// ListConfigResources, versions 0-1 (KIP-714's ListClientMetricsResources
// as v0, generalised by KIP-1142 in v1).
//
// v0 lists client-metrics resources: fakekafka has none (no client-metrics
// plugin), so the list is empty. v1 lists the resources of the requested
// types (none requested: every type): TOPIC every topic, BROKER and
// BROKER_LOGGER every registered broker id, GROUP the groups with group
// configs, CLIENT_METRICS none (fakekafka keeps no client-metrics configs). Another type is
// UNSUPPORTED_VERSION with no resources, as Kafka 4.4 answers it. With the
// authorizer both versions need DESCRIBE_CONFIGS on the cluster (else
// CLUSTER_AUTHORIZATION_FAILED).

import (
	"maps"
	"slices"
	"strconv"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's ConfigResource.Type codes.
const (
	configResourceTopic         = 2
	configResourceBroker        = 4
	configResourceBrokerLogger  = 8
	configResourceClientMetrics = 16
	configResourceGroup         = 32
)

func (cn *conn) handleListConfigResources(req *kmsg.ListConfigResourcesRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.ListConfigResourcesResponse)
	resp.ConfigResources = []kmsg.ListConfigResourcesResponseConfigResource{}
	if !cn.allowedCluster(authorizer.OpDescribeConfigs) {
		resp.ErrorCode = errClusterAuth
		return resp, nil
	}
	if req.Version == 0 {
		return resp, nil // client-metrics resources only: none
	}
	types := req.ResourceTypes
	if len(types) == 0 {
		types = []int8{configResourceTopic, configResourceBroker, configResourceBrokerLogger, configResourceClientMetrics, configResourceGroup}
	}
	add := func(name string, typ int8) {
		r := kmsg.NewListConfigResourcesResponseConfigResource()
		r.Name, r.Type = name, typ
		resp.ConfigResources = append(resp.ConfigResources, r)
	}
	for _, typ := range types {
		switch typ {
		case configResourceTopic:
			for _, name := range slices.Sorted(maps.Keys(c.topics.Load().byName)) {
				add(name, typ)
			}
		case configResourceBroker, configResourceBrokerLogger:
			for _, b := range c.brokers {
				if b.registered() {
					add(strconv.Itoa(int(b.id)), typ)
				}
			}
		case configResourceGroup: // the groups with group configs
			for _, name := range slices.Sorted(maps.Keys(c.groupCfgs.Load().explicit)) {
				add(name, typ)
			}
		case configResourceClientMetrics:
		default:
			resp.ConfigResources = []kmsg.ListConfigResourcesResponseConfigResource{}
			resp.ErrorCode = kerr.UnsupportedVersion.Code
			return resp, nil
		}
	}
	return resp, nil
}
