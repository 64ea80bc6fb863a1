package server

// BROKER_LOGGER resources: each broker's log4j logger levels, as Kafka's
// Log4jController describes them and IncrementalAlterConfigs sets them
// (SET a level, DELETE back to the root logger's; APPEND and SUBTRACT are
// refused). fakekafka keeps the levels per broker, in memory as Kafka does
// (not in the data dir: a new process starts from the root level; a broker
// stopped and started keeps them), and logs through slog regardless: the
// levels are stored and described, not acted on. A broker lists the root
// logger and every logger ever set on it.

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const rootLogger = "root"

// logLevels are the levels log4j accepts, as Kafka lists them.
var logLevels = []string{"DEBUG", "ERROR", "FATAL", "INFO", "TRACE", "WARN"}

// rootLevel is Kafka's default root level (its log4j2.yaml).
const rootLevel = "INFO"

// loggerResource checks a BROKER_LOGGER resource name: the id of the
// broker the request came to.
func loggerResource(name string, broker int32, describe bool) (int32, *configErr) {
	if name == "" {
		return 0, refuse(kerr.InvalidRequest, "Broker id must not be empty")
	}
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		if describe { // Kafka 4.4's words differ between describe and alter
			return 0, refuse(kerr.InvalidRequest, "Broker id must be an integer, but it is: %s", name)
		}
		return 0, refuse(kerr.InvalidRequest, "Node id must be an integer, but it is: %s", name)
	}
	if broker != clusterLevel && int32(id) != broker {
		if describe {
			return 0, refuse(kerr.InvalidRequest, "Unexpected broker id, expected %d but received %s", broker, name)
		}
		return 0, refuse(kerr.InvalidRequest, "Unexpected node id. Expected %d, but received %s", broker, name)
	}
	return int32(id), nil
}

// alterLoggers applies a BROKER_LOGGER change.
func (c *Cluster) alterLoggers(r *alterRequest) *configErr {
	id, e := loggerResource(r.name, r.broker, false)
	if e != nil {
		return e
	}
	for _, o := range r.ops {
		switch o.op {
		case kmsg.IncrementalAlterConfigOpSet:
			if !slices.Contains(logLevels, strings.ToUpper(*o.value)) {
				return refuse(kerr.InvalidConfig, "Cannot set the log level of %s to %s as it is not a supported log level. Valid log levels are %s",
					o.name, *o.value, strings.Join(logLevels, ", "))
			}
		case kmsg.IncrementalAlterConfigOpDelete:
			if o.name == rootLogger {
				return refuse(kerr.InvalidRequest, "Removing the log level of the root logger is not allowed")
			}
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			return refuse(kerr.InvalidRequest, "%s operation is not allowed for the BROKER_LOGGER resource", o.op)
		default:
			return refuse(kerr.InvalidRequest, "Unknown operation type %d is not allowed for the BROKER_LOGGER resource", o.op)
		}
	}
	if r.validateOnly {
		return nil
	}
	c.configMu.Lock()
	defer c.configMu.Unlock()
	levels := c.loggers[id]
	if levels == nil {
		levels = map[string]string{rootLogger: rootLevel}
		c.loggers[id] = levels
	}
	for _, o := range r.ops {
		if o.op == kmsg.IncrementalAlterConfigOpSet {
			levels[o.name] = strings.ToUpper(*o.value)
		} else {
			levels[o.name] = "" // known, inherits the root's level
		}
	}
	c.log.Info("logger levels changed", "broker", id, "loggers", maps.Clone(levels))
	return nil
}

// loggerEntries describes broker id's loggers.
func (c *Cluster) loggerEntries(id int32) []configEntry {
	c.configMu.Lock()
	defer c.configMu.Unlock()
	levels := c.loggers[id]
	root := rootLevel
	if v := levels[rootLogger]; v != "" {
		root = v
	}
	names := slices.Sorted(maps.Keys(levels))
	if len(levels) == 0 {
		names = []string{rootLogger}
	}
	out := make([]configEntry, 0, len(names))
	for _, n := range names {
		v := levels[n]
		if v == "" {
			v = root
		}
		out = append(out, configEntry{name: n, value: &v, source: kmsg.ConfigSourceDynamicBrokerLoggerConfig, typ: kmsg.ConfigTypeUnknown})
	}
	return out
}
