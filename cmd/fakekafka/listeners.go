package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/server"
)

// parseListenerList parses Kafka's "NAME://HOST:PORT,..." form into names
// and addresses, in order.
func parseListenerList(flagName, s string) ([]string, map[string]string, error) {
	var names []string
	addrs := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, addr, ok := strings.Cut(item, "://")
		if !ok || name == "" {
			return nil, nil, fmt.Errorf("--%s: %q is not NAME://HOST:PORT", flagName, item)
		}
		if _, port, err := net.SplitHostPort(addr); err != nil {
			return nil, nil, fmt.Errorf("--%s: %q: %v", flagName, item, err)
		} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return nil, nil, fmt.Errorf("--%s: %q: bad port", flagName, item)
		}
		if _, dup := addrs[name]; dup {
			return nil, nil, fmt.Errorf("--%s: listener %s is listed twice", flagName, name)
		}
		names = append(names, name)
		addrs[name] = addr
	}
	return names, addrs, nil
}

// buildListeners turns --listeners, --advertised-listeners and
// --listener-security-protocol-map into the cluster's listeners. A
// listener missing from --advertised-listeners advertises its listen
// address (the hostname for an empty host, as Kafka does).
func buildListeners(listeners, advertised, protocolMap string) ([]server.Listener, error) {
	names, binds, err := parseListenerList("listeners", listeners)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("--listeners: no listener given")
	}
	_, advs, err := parseListenerList("advertised-listeners", advertised)
	if err != nil {
		return nil, err
	}
	protocols := map[string]string{}
	for _, item := range strings.Split(protocolMap, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, proto, ok := strings.Cut(item, ":")
		if !ok || name == "" || proto == "" {
			return nil, fmt.Errorf("--listener-security-protocol-map: %q is not NAME:PROTOCOL", item)
		}
		protocols[name] = proto
	}
	var out []server.Listener
	for _, name := range names {
		l := server.Listener{Name: name, SecurityProtocol: protocols[name], Listen: binds[name]}
		if adv, ok := advs[name]; ok {
			host, port, _ := net.SplitHostPort(adv)
			if host == "" || host == "0.0.0.0" || host == "::" {
				return nil, fmt.Errorf("--advertised-listeners: %s must name a host clients can reach, not %q", name, host)
			}
			l.AdvertisedHost = host
			l.AdvertisedPort, _ = strconv.Atoi(port)
			delete(advs, name)
		}
		out = append(out, l)
	}
	for name := range advs {
		return nil, fmt.Errorf("--advertised-listeners: %s is not in --listeners", name)
	}
	return out, nil
}
