package server

// Names on the control surfaces: Kafka's API and error names or numbers, as
// fault rules (InjectFault) and their states take them.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// faultAPIKey resolves an API name (Kafka's, in any case, with or without
// underscores) or key number to a key the broker serves.
func faultAPIKey(name string) (int16, error) {
	key, ok := apiKeysByName()[normalizeAPIName(name)]
	if n, err := strconv.ParseInt(name, 10, 16); err == nil {
		key, ok = int16(n), kmsg.RequestForKey(int16(n)) != nil
	}
	switch {
	case !ok:
		return 0, fmt.Errorf("unknown API %q: use Kafka's name, such as Produce or Fetch, or the API key", name)
	case key == apiVersionsKey:
		return 0, errors.New("ApiVersions is answered before fault rules apply")
	}
	if _, served := protocol.Lookup(key); !served {
		return 0, fmt.Errorf("API %s is not served by fakekafka, so a rule for it would never fire", kmsg.NameForKey(key))
	}
	return key, nil
}

func normalizeAPIName(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }

var apiKeysByName = sync.OnceValue(func() map[string]int16 {
	m := map[string]int16{}
	for key := range int16(200) {
		if kmsg.RequestForKey(key) != nil {
			m[normalizeAPIName(kmsg.NameForKey(key))] = key
		}
	}
	m["alterpartitionreassignments"] = 45 // Kafka's name; kmsg says AlterPartitionAssignments
	return m
})

// faultErrorCode resolves a Kafka error name or code.
func faultErrorCode(s string) (int16, error) {
	code, ok := errorCodesByName()[strings.ToUpper(s)]
	if n, err := strconv.ParseInt(s, 10, 16); err == nil {
		code, ok = int16(n), true
	}
	switch {
	case !ok:
		return 0, fmt.Errorf("unknown Kafka error %q: use its name, such as NOT_ENOUGH_REPLICAS, or its code", s)
	case code == 0:
		return 0, errors.New("error NONE (0) is no error; leave the error empty for a rule that only delays or drops")
	}
	return code, nil
}

// errorName is Kafka's current name for code, or the code itself.
func errorName(code int16) string {
	if code == kerr.NotLeaderForPartition.Code {
		return "NOT_LEADER_OR_FOLLOWER" // Kafka's name since 2.7; kerr keeps the old one
	}
	if e := kerr.TypedErrorForCode(code); e != nil && e.Code == code {
		return e.Message
	}
	return strconv.Itoa(int(code))
}

var errorCodesByName = sync.OnceValue(func() map[string]int16 {
	m := map[string]int16{"NONE": 0, "NOT_LEADER_OR_FOLLOWER": kerr.NotLeaderForPartition.Code}
	for code := int16(-1); code <= 200; code++ {
		if e := kerr.TypedErrorForCode(code); e != nil && e.Code == code {
			m[e.Message] = code
		}
	}
	return m
})
